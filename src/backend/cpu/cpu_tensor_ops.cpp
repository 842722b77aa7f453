// CPU data movement: copy, fill, the counter-RNG normal fill and element-type conversion
// between f16, bf16, f32 and f64 (on the OpenMP threads: each element is its own).
#include <cstring>
#include <type_traits>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/isa_clones.h"
#include "backend/operand_checks.h"
#include "core/bfloat16.h"
#include "core/counter_rng.h"
#include "core/float16_bits.h"
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

// f32 -> bf16 and back: bf16 training casts every convolution's operands each step, so these
// take no detour through f64 and no branch, and vectorise (AVX-512 where the CPU has it). The
// same bits as host_cast's.
PFC_ISA_CLONES
void f32_to_bf16_block(const float* in, std::uint16_t* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = bf16_bits_nearest(in[i]);
}

PFC_ISA_CLONES
void bf16_to_f32_block(const std::uint16_t* in, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = bf16_bits_to_float(in[i]);
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
    case DType::bf16:
      fill_typed(x, BFloat16(static_cast<float>(value)));
      break;
  }
}

void CpuBackend::fill_normal(Tensor& x, std::uint64_t key, std::uint64_t first_index,
                             double stddev) {
  operand_check::fill_normal(rules_, x);
  // Each element is its own draw: any split over the threads gives the same values.
  auto draw = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    parallel_for(x.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i)
        p[i] = T(normal_value(key, first_index + static_cast<std::uint64_t>(i), stddev));
    });
  };
  switch (x.dtype()) {
    case DType::f16:
      return draw(x.data<Half>());
    case DType::bf16:
      return draw(x.data<BFloat16>());
    default:
      return draw(x.data<float>());
  }
}

void CpuBackend::cast(const Tensor& src, Tensor& dst) {
  operand_check::cast(rules_, src, dst);
  if (src.dtype() == DType::f32 && dst.dtype() == DType::bf16) {
    const float* in = src.data<float>();
    auto* out = reinterpret_cast<std::uint16_t*>(dst.data<BFloat16>());
    parallel_for(src.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
      f32_to_bf16_block(in + begin, out + begin, end - begin);
    });
  } else if (src.dtype() == DType::bf16 && dst.dtype() == DType::f32) {
    const auto* in = reinterpret_cast<const std::uint16_t*>(src.data<BFloat16>());
    float* out = dst.data<float>();
    parallel_for(src.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
      bf16_to_f32_block(in + begin, out + begin, end - begin);
    });
  } else {
    host_cast(src, dst);
  }
}

}  // namespace pfc
