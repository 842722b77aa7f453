// CPU data movement: copy, fill, the counter-RNG normal fill and element-type conversion
// between f16, f32 and f64.
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "core/counter_rng.h"
#include "core/half.h"
#include "core/host_cast.h"

namespace pfc {
namespace {

template <class T>
void fill_typed(Tensor& x, T value) {
  T* p = x.data<T>();
  for (std::int64_t i = 0, n = x.numel(); i < n; ++i) p[i] = value;
}

}  // namespace

void CpuBackend::copy(const Tensor& src, Tensor& dst) {
  cpu::check_host(src, "copy", "src");
  cpu::check_host(dst, "copy", "dst");
  check_dtype(dst, src.dtype(), "copy", "dst");
  PFC_CHECK(src.numel() == dst.numel(), "copy: src {} and dst {} differ in element count",
            src.describe(), dst.describe());
  if (src.raw() != dst.raw() && src.bytes() > 0) std::memmove(dst.raw(), src.raw(), src.bytes());
}

void CpuBackend::fill(Tensor& x, double value) {
  cpu::check_host(x, "fill", "x");
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
  cpu::check_host(x, "fill_normal", "x");
  check_dtype(x, DType::f32, "fill_normal", "x");
  float* p = x.data<float>();
  for (std::int64_t i = 0, n = x.numel(); i < n; ++i)
    p[i] = normal_value(key, first_index + static_cast<std::uint64_t>(i), stddev);
}

void CpuBackend::cast(const Tensor& src, Tensor& dst) { host_cast(src, dst); }

}  // namespace pfc
