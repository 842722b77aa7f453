#include "gpu_test_support.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/counter_rng.h"
#include "core/half.h"

#ifdef PFC_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace pfc::test {

namespace {
// Enough for every test here; the arena itself is tested in device_arena_test.cpp.
constexpr std::size_t kTestArenaBytes = std::size_t{4} << 30;
}  // namespace

bool gpu_available() { return cuda_compiled() && cuda_device_count() > 0; }

Backend& gpu_backend() {
#ifdef PFC_HAVE_CUDA
  // Never destroyed: library handles released after the CUDA runtime has shut down at exit
  // can fault, and the process is ending anyway.
  static CudaBackend* backend = new CudaBackend(0, kTestArenaBytes);
  return *backend;
#else
  throw Error("gpu_backend(): built without CUDA");
#endif
}

CpuBackend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

Tensor random_host(const Shape& shape, double lo, double hi, std::uint64_t seed) {
  Tensor t = Tensor::host(shape, DType::f32);
  float* p = t.data<float>();
  const std::uint64_t key = stream_key(seed, "gpu-test");
  for (std::int64_t i = 0; i < t.numel(); ++i)
    p[i] = static_cast<float>(lo + (hi - lo) * uniform53(key, static_cast<std::uint64_t>(i)));
  return t;
}

Tensor host_index(const std::vector<std::int64_t>& values) {
  Tensor t = Tensor::host({static_cast<std::int64_t>(values.size())}, DType::i64);
  std::copy(values.begin(), values.end(), t.data<std::int64_t>());
  return t;
}

Tensor round_to_half(const Tensor& host_f32) {
  Tensor t = clone_host(host_f32);
  float* p = t.data<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = Half(p[i]).to_float();
  return t;
}

Tensor clone_host(const Tensor& host_f32) {
  Tensor t = Tensor::host(host_f32.shape(), DType::f32);
  std::copy_n(host_f32.data<float>(), host_f32.numel(), t.data<float>());
  return t;
}

Tensor difference(const Tensor& a_f32, const Tensor& b_f32) {
  PFC_CHECK(a_f32.shape() == b_f32.shape(), "difference: shapes {} and {} differ",
            a_f32.describe(), b_f32.describe());
  Tensor d = Tensor::host(a_f32.shape(), DType::f32);
  const float* a = a_f32.data<float>();
  const float* b = b_f32.data<float>();
  float* out = d.data<float>();
  for (std::int64_t i = 0; i < d.numel(); ++i) out[i] = a[i] - b[i];
  return d;
}

Tensor to_device(const Tensor& host_f32, DType dtype, MemoryPurpose purpose) {
  Backend& gpu = gpu_backend();
  Tensor d = gpu.empty(host_f32.shape(), dtype, purpose);
  if (dtype == DType::f32) {
    gpu.copy(host_f32, d);
  } else {
    Tensor h = Tensor::host(host_f32.shape(), DType::f16);
    Half* out = h.data<Half>();
    const float* in = host_f32.data<float>();
    for (std::int64_t i = 0; i < h.numel(); ++i) out[i] = Half(in[i]);
    gpu.copy(h, d);
  }
  gpu.synchronize();  // the host staging tensor goes away on return
  return d;
}

Tensor to_device_same(const Tensor& host) {
  Backend& gpu = gpu_backend();
  Tensor d = gpu.empty(host.shape(), host.dtype(), MemoryPurpose::activations);
  gpu.copy(host, d);
  gpu.synchronize();
  return d;
}

Tensor to_host_f32(const Tensor& device) {
  Backend& gpu = gpu_backend();
  Tensor h = Tensor::host(device.shape(), device.dtype());
  gpu.copy(device, h);
  gpu.synchronize();
  if (device.dtype() == DType::f32) return h;
  Tensor f = Tensor::host(device.shape(), DType::f32);
  float* out = f.data<float>();
  if (device.dtype() == DType::f16) {
    const Half* in = h.data<Half>();
    for (std::int64_t i = 0; i < f.numel(); ++i) out[i] = in[i].to_float();
  } else {
    const double* in = h.data<double>();
    for (std::int64_t i = 0; i < f.numel(); ++i) out[i] = static_cast<float>(in[i]);
  }
  return f;
}

Conv2dGeometry conv_geometry(std::int64_t batch, std::int64_t hw, std::int64_t in,
                             std::int64_t out, std::int64_t kernel, std::int64_t stride,
                             std::int64_t pad, std::int64_t groups) {
  Conv2dGeometry g;
  g.batch = batch;
  g.in_h = g.in_w = hw;
  g.in_channels = in;
  g.out_channels = out;
  g.kernel = kernel;
  g.stride = stride;
  g.pad = pad;
  g.groups = groups;
  return g;
}

ConvReference cpu_conv_reference(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                 const Tensor& dy) {
  ConvReference r{Tensor::host(g.output_shape(), DType::f32),
                  Tensor::host(g.input_shape(), DType::f32),
                  Tensor::host(g.filter_shape(), DType::f32)};
  cpu_backend().conv2d_forward(g, x, w, r.y);
  cpu_backend().conv2d_backward_data(g, dy, w, r.dx);
  cpu_backend().conv2d_backward_filter(g, x, dy, r.dw);
  return r;
}

void expect_close(const Tensor& actual_f32, const Tensor& expected_f32, double tol,
                  const std::string& what) {
  ASSERT_EQ(actual_f32.shape(), expected_f32.shape()) << what;
  const float* a = actual_f32.data<float>();
  const float* e = expected_f32.data<float>();
  double diff2 = 0.0, ref2 = 0.0, max_diff = 0.0, max_ref = 0.0;
  std::int64_t worst = 0;
  for (std::int64_t i = 0; i < actual_f32.numel(); ++i) {
    const double d = std::abs(static_cast<double>(a[i]) - e[i]);
    diff2 += d * d;
    ref2 += static_cast<double>(e[i]) * e[i];
    // The first NaN is the worst element and stays so.
    if (!std::isnan(max_diff) && (std::isnan(d) || d > max_diff)) {
      max_diff = d;
      worst = i;
    }
    max_ref = std::max(max_ref, std::abs(static_cast<double>(e[i])));
  }
  const double floor = 1e-30;
  const double rel_l2 = std::sqrt(diff2) / std::max(std::sqrt(ref2), floor);
  const double rel_max = max_diff / std::max(max_ref, floor);
  EXPECT_LE(rel_l2, tol) << what << ": relative L2 error " << rel_l2;
  EXPECT_LE(rel_max, tol) << what << ": largest error " << max_diff << " at " << worst << " (got "
                          << a[worst] << ", want " << e[worst] << ", max |want| " << max_ref << ")";
}

}  // namespace pfc::test
