#include "core/host_cast.h"

#include <type_traits>

#include "core/bfloat16.h"
#include "core/half.h"
#include "core/parallel_for.h"

namespace pfc {
namespace {

// Reads element i of a floating tensor as double; f16 and bf16 go through float exactly.
template <class T>
double load(const T* p, std::int64_t i) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return p[i].to_float();
  } else {
    return static_cast<double>(p[i]);
  }
}

template <class T>
void store(T* p, std::int64_t i, double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    // double -> float -> 16 bits, each rounded to nearest even, as c10::Half(double) does.
    p[i] = T(static_cast<float>(v));
  } else {
    p[i] = static_cast<T>(v);
  }
}

template <class F>
decltype(auto) dispatch_cast_type(DType t, const char* operand, F&& f) {
  switch (t) {
    case DType::f16:
      return f(Half{});
    case DType::f32:
      return f(float{});
    case DType::f64:
      return f(double{});
    case DType::bf16:
      return f(BFloat16{});
    default:
      throw Error(fmt::format("cast: {} is {}, expected f16, bf16, f32 or f64", operand,
                              dtype_name(t)));
  }
}

void check_host(const Tensor& t, const char* operand) {
  PFC_CHECK(t.defined(), "cast: {} is an undefined tensor", operand);
  PFC_CHECK(t.device() == DeviceKind::cpu, "cast: {} {} is not a host tensor", operand,
            t.describe());
}

}  // namespace

void host_cast(const Tensor& src, Tensor& dst) {
  check_host(src, "src");
  check_host(dst, "dst");
  PFC_CHECK(src.numel() == dst.numel(), "cast: src {} and dst {} differ in element count",
            src.describe(), dst.describe());
  dispatch_cast_type(src.dtype(), "src", [&](auto s) {
    using S = decltype(s);
    dispatch_cast_type(dst.dtype(), "dst", [&](auto d) {
      using D = decltype(d);
      const S* in = src.data<S>();
      D* out = dst.data<D>();
      parallel_for(src.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) store(out, i, load(in, i));
      });
    });
  });
}

}  // namespace pfc
