// CPU data movement: copy, fill, the counter-RNG normal fill and element-type conversion
// between f16, f32 and f64 (the last two on the OpenMP threads: each element is its own).
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/operand_checks.h"
#include "core/counter_rng.h"
#include "core/half.h"
#include "core/host_cast.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

template <class T>
void fill_typed(Tensor& x, T value) {
  T* p = x.data<T>();
  for (std::int64_t i = 0, n = x.numel(); i < n; ++i) p[i] = value;
}

}  // namespace

void CpuBackend::copy(const Tensor& src, Tensor& dst) {
  operand_check::copy(rules_, src, dst);
  if (src.raw() != dst.raw() && src.bytes() > 0) std::memmove(dst.raw(), src.raw(), src.bytes());
}

void CpuBackend::fill(Tensor& x, double value) {
  operand_check::fill(rules_, x);
  switch (x.dtype()) {
    case DType::f16:
      fill_typed(x, Half(static_cast<float>(value)));
      break;
    case DType::f32:
      fill_typed(x, static_cast<float>(value));
      break;
    case DType::f64:
      fill_typed(x, value);
      break;
    case DType::i32:
      fill_typed(x, static_cast<std::int32_t>(value));
      break;
    case DType::i64:
      fill_typed(x, static_cast<std::int64_t>(value));
      break;
    case DType::u8:
      fill_typed(x, static_cast<std::uint8_t>(value));
      break;
  }
}

void CpuBackend::fill_normal(Tensor& x, std::uint64_t key, std::uint64_t first_index,
                             double stddev) {
  operand_check::fill_normal(rules_, x);
  float* p = x.data<float>();
  parallel_for(x.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      p[i] = normal_value(key, first_index + static_cast<std::uint64_t>(i), stddev);
  });
}

void CpuBackend::cast(const Tensor& src, Tensor& dst) {
  operand_check::cast(rules_, src, dst);
  host_cast(src, dst);
}

}  // namespace pfc
