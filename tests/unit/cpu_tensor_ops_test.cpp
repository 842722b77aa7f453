// CpuBackend data movement: copy, fill of every dtype, and casts (f32 -> f16 -> f32 and
// f32 -> bf16 -> f32 round to nearest even like the device's __half and __nv_bfloat16;
// f32 <-> f64).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <span>

#include "backend/cpu/cpu_backend.h"
#include "core/bfloat16.h"
#include "core/half.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::random_uniform;

// `cases` cast to a 16-bit type and back to f32 by the backend.
struct RoundTrip {
  Tensor half, back;
};

RoundTrip cast_there_and_back(CpuBackend& backend, std::span<const float> cases, DType half) {
  const auto n = static_cast<std::int64_t>(cases.size());
  Tensor f = Tensor::host({n}, DType::f32);
  std::copy(cases.begin(), cases.end(), f.data<float>());
  RoundTrip r{Tensor::host({n}, half), Tensor::host({n}, DType::f32)};
  backend.cast(f, r.half);
  backend.cast(r.half, r.back);
  return r;
}

TEST(CpuTensorOps, CopyAndFill) {
  CpuBackend backend;
  const Tensor src = random_uniform({3, 4}, DType::f32, 1);
  Tensor dst = backend.empty({12}, DType::f32, MemoryPurpose::workspace);
  backend.copy(src, dst);
  for (std::int64_t i = 0; i < 12; ++i) EXPECT_EQ(dst.data<float>()[i], src.data<float>()[i]);

  Tensor i64 = Tensor::host({5}, DType::i64);
  backend.fill(i64, -3.0);
  for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(i64.data<std::int64_t>()[i], -3);
  Tensor h = Tensor::host({2}, DType::f16);
  backend.fill(h, 1.0);
  EXPECT_EQ(h.data<Half>()[1].bits(), 0x3C00);
  Tensor z = backend.zeros({4}, DType::f64, MemoryPurpose::workspace);
  for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(z.data<double>()[i], 0.0);

  Tensor wrong = Tensor::host({12}, DType::f64);
  EXPECT_THROW(backend.copy(src, wrong), Error);
}

TEST(CpuTensorOps, CastF32ToF16RoundsToNearestEven) {
  CpuBackend backend;
  const float cases[] = {1.0f + std::ldexp(1.0f, -11),      // tie: down to 1
                         1.0f + 3 * std::ldexp(1.0f, -11),  // tie: up to 1 + 2^-9
                         0.1f,
                         -2.5f,
                         65504.0f,
                         65520.0f,  // 65520 overflows to inf
                         1e-7f,
                         std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN()};
  const std::int64_t n = std::size(cases);
  const auto [h, back] = cast_there_and_back(backend, cases, DType::f16);
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(h.data<Half>()[i].bits(), Half::from_float(cases[i])) << cases[i];
    if (std::isnan(cases[i])) {
      EXPECT_TRUE(std::isnan(back.data<float>()[i]));
    } else {
      EXPECT_EQ(back.data<float>()[i], Half::to_float(Half::from_float(cases[i]))) << cases[i];
    }
  }
  EXPECT_EQ(back.data<float>()[0], 1.0f);
  EXPECT_EQ(back.data<float>()[1], 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(back.data<float>()[2], 0.0999755859375f);
  EXPECT_TRUE(std::isinf(back.data<float>()[5]));
}

// The casts of the CPU's bf16 training (every convolution's operands): f32's top 16 bits,
// rounded to nearest even; back to f32 exactly.
TEST(CpuTensorOps, CastF32ToBf16RoundsToNearestEven) {
  CpuBackend backend;
  const float cases[] = {1.0f + std::ldexp(1.0f, -8),      // tie: down to 1
                         1.0f + 3 * std::ldexp(1.0f, -8),  // tie: up to 1 + 2^-6
                         1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20),  // above: up
                         -2.5f,
                         std::numeric_limits<float>::max(),  // rounds past bf16's largest: inf
                         1e-40f,         // subnormal
                         -std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN()};
  const std::uint16_t expected[] = {0x3F80, 0x3F82, 0x3F81, 0xC020, 0x7F80, 0x0001, 0xFF80};
  const std::int64_t n = std::size(cases);
  const auto [b, back] = cast_there_and_back(backend, cases, DType::bf16);
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    EXPECT_EQ(b.data<BFloat16>()[i].bits(), expected[i]) << cases[i];
    EXPECT_EQ(back.data<float>()[i], b.data<BFloat16>()[i].to_float()) << cases[i];
  }
  EXPECT_TRUE(std::isnan(back.data<float>()[n - 1]));
}

TEST(CpuTensorOps, CastBetweenF32AndF64) {
  CpuBackend backend;
  const Tensor d = random_uniform({7}, DType::f64, 2);
  Tensor f = Tensor::host({7}, DType::f32);
  Tensor d2 = Tensor::host({7}, DType::f64);
  backend.cast(d, f);
  backend.cast(f, d2);
  for (std::int64_t i = 0; i < 7; ++i) {
    EXPECT_EQ(f.data<float>()[i], static_cast<float>(d.data<double>()[i]));
    EXPECT_EQ(d2.data<double>()[i], static_cast<double>(f.data<float>()[i]));
  }
}

// Backend::copy_cast: a copy when the types agree, the cast otherwise; an f64 run's masters
// start from f32 values this way, and its results reach f64 host tensors.
TEST(CpuTensorOps, CopyCastConvertsToTheDestinationsType) {
  CpuBackend backend;
  const Tensor d = random_uniform({7}, DType::f64, 3);
  Tensor f = Tensor::host({7}, DType::f32);
  backend.copy_cast(d, f);
  Tensor d2 = Tensor::host({7}, DType::f64);
  backend.copy_cast(f, d2);
  Tensor same = Tensor::host({7}, DType::f64);
  backend.copy_cast(d, same);
  for (std::int64_t i = 0; i < 7; ++i) {
    EXPECT_EQ(f.data<float>()[i], static_cast<float>(d.data<double>()[i]));
    EXPECT_EQ(d2.data<double>()[i], static_cast<double>(f.data<float>()[i]));
    EXPECT_EQ(same.data<double>()[i], d.data<double>()[i]);
  }
  Tensor ints = Tensor::host({7}, DType::i64);
  EXPECT_THROW(backend.copy_cast(d, ints), Error);
  Tensor fewer = Tensor::host({6}, DType::f32);
  EXPECT_THROW(backend.copy_cast(d, fewer), Error);
}

TEST(CpuTensorOps, CastRejectsIntegerTypes) {
  CpuBackend backend;
  const Tensor i = Tensor::host({3}, DType::i32);
  Tensor f = Tensor::host({3}, DType::f32);
  try {
    backend.cast(i, f);
    FAIL() << "expected pfc::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cast: src is i32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pfc
