#include "backend/cpu/onednn_sgemm.h"

#include <dnnl.h>

namespace pfc::cpu {

bool onednn_sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, float alpha, const float* a, std::int64_t lda, const float* b,
                  std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  // oneDNN's sgemm is row-major, unlike the BLAS's.
  return dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, alpha, a, lda, b,
                    ldb, beta, c, ldc) == dnnl_success;
}

}  // namespace pfc::cpu
