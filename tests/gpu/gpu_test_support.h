// What the GPU tests share: one CUDA backend per test process (a small arena, so tests do
// not reserve the whole card), the CPU reference backend, random host inputs, transfers that
// convert through the host's Half, and the closeness check. Everything compiles without
// CUDA; gpu_backend() is only called after PFC_REQUIRE_GPU() has let a test through.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "core/tensor.h"

namespace pfc::test {

bool gpu_available();

#define PFC_REQUIRE_GPU()                                                        \
  do {                                                                           \
    if (!::pfc::cuda_compiled()) GTEST_SKIP() << "built without CUDA";           \
    if (!::pfc::test::gpu_available()) GTEST_SKIP() << "no CUDA device visible"; \
  } while (0)

Backend& gpu_backend();
CpuBackend& cpu_backend();

// f32 host tensor, uniform in [lo, hi), a pure function of (seed, index).
Tensor random_host(const Shape& shape, double lo, double hi, std::uint64_t seed);
// i64 host tensor from a list.
Tensor host_index(const std::vector<std::int64_t>& values);
// The f32 values rounded through binary16, so the CPU reference sees exactly the f16 inputs.
Tensor round_to_half(const Tensor& host_f32);
// A device tensor of `dtype` (f16 or f32) holding the host f32 values (converted on the host).
Tensor to_device(const Tensor& host_f32, DType dtype,
                 MemoryPurpose purpose = MemoryPurpose::activations);
// A device copy of any host tensor, same dtype.
Tensor to_device_same(const Tensor& host);
// The device tensor's values on the host as f32 (after synchronising the GPU backend).
Tensor to_host_f32(const Tensor& device);
// A host f32 copy of a host tensor.
Tensor clone_host(const Tensor& host_f32);
// a - b, element by element, of two host f32 tensors of one shape.
Tensor difference(const Tensor& a_f32, const Tensor& b_f32);

// A square convolution: batch x hw x hw x in -> out channels, in `groups` groups.
Conv2dGeometry conv_geometry(std::int64_t batch, std::int64_t hw, std::int64_t in,
                             std::int64_t out, std::int64_t kernel, std::int64_t stride,
                             std::int64_t pad, std::int64_t groups = 1);
// The CPU backend's three directions of one convolution (host f32 tensors).
struct ConvReference {
  Tensor y, dx, dw;
};
ConvReference cpu_conv_reference(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                 const Tensor& dy);

// Relative L2 error ||a - e|| / ||e||, and the largest |a - e| relative to max |e|, both
// within tol; `what` names the comparison in the failure message.
void expect_close(const Tensor& actual_f32, const Tensor& expected_f32, double tol,
                  const std::string& what);

// Tolerances: f32 runs agree to f32 rounding; f16 ones to f16 storage of inputs/outputs.
constexpr double kTolF32 = 1e-5;
constexpr double kTolF16 = 1e-2;
inline double tolerance(DType dtype) { return dtype == DType::f16 ? kTolF16 : kTolF32; }

}  // namespace pfc::test
