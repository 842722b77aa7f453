#include <memory>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "core/error.h"

#ifdef PFC_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace pfc {

bool cuda_compiled() {
#ifdef PFC_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() {
#ifdef PFC_HAVE_CUDA
  return cuda_visible_device_count();
#else
  return 0;
#endif
}

std::unique_ptr<Backend> make_backend(BackendKind kind, int device_ordinal) {
  if (kind == BackendKind::cpu) return std::make_unique<CpuBackend>();
#ifdef PFC_HAVE_CUDA
  PFC_CHECK(cuda_device_count() > 0, "device = \"cuda\" but no GPU is visible");
  return make_cuda_backend(device_ordinal);
#else
  (void)device_ordinal;
  throw UsageError("device = \"cuda\" but this pfc was built without CUDA (see `pfc info`)");
#endif
}

}  // namespace pfc
