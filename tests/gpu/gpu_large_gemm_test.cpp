// GEMMs whose operands hold more than 2^31 elements, as the largest plans' class-centre shards
// do ([5.17M, 512] in f16 on one H200): the logits x . W^T and the centres' gradient
// dlogits^T . x on a [2^22 + 1, 512] f16 matrix (4 GiB), through cuBLAS's 64-bit API, against
// the CPU backend on the first rows and on the last ones, across element 2^31. Its own backend
// with an arena large enough (the shared test backend's is 4 GiB); skipped without a GPU or the
// memory.
// tests/gpu/run_on_device.sh runs it as a step of its own (gpu_large_gemm).
#include <gtest/gtest.h>

#include <memory>

#include "gpu_test_support.h"

#ifdef PFC_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace pfc::test {
namespace {

#ifdef PFC_HAVE_CUDA

constexpr std::int64_t kRows = (std::int64_t{1} << 22) + 1, kWidth = 512, kBatch = 4;
constexpr std::int64_t kChecked = 64;  // rows compared at each end
// W and the f16 gradient (4 GiB each), the f32 logits and the rest, with room to spare.
constexpr std::size_t kArenaBytes = std::size_t{9} << 30;

// Columns [begin, end) of a host f32 matrix.
Tensor columns(const Tensor& m, std::int64_t begin, std::int64_t end) {
  Tensor out = Tensor::host({m.dim(0), end - begin}, DType::f32);
  for (std::int64_t r = 0; r < m.dim(0); ++r)
    for (std::int64_t c = begin; c < end; ++c)
      out.data<float>()[r * (end - begin) + c - begin] = m.data<float>()[r * m.dim(1) + c];
  return out;
}

// Device rows [first, first + count) of `device` as host f32, read by `gpu`.
Tensor host_rows(Backend& gpu, const Tensor& device, std::int64_t first, std::int64_t count) {
  Tensor out = Tensor::host({count, device.dim(1)}, DType::f32);
  gpu.synchronize();
  gpu.copy_cast(device.rows(first, first + count), out);
  return out;
}

// A host f32 matrix as host f16 (exact for values already rounded to half).
Tensor half(const Tensor& host_f32) {
  Tensor out = Tensor::host(host_f32.shape(), DType::f16);
  cpu_backend().cast(host_f32, out);
  return out;
}

void large_gemms_match_cpu() {
  ASSERT_GT(kRows * kWidth, std::int64_t{1} << 31);
  if (cuda_arena_reservation_bytes(0) < static_cast<std::int64_t>(kArenaBytes))
    GTEST_SKIP() << "the GPU has less than " << (kArenaBytes >> 30) << " GiB free";
  CudaBackend gpu(0, kArenaBytes);
  CpuBackend& cpu = cpu_backend();

  Tensor w = gpu.empty({kRows, kWidth}, DType::f16, MemoryPurpose::weights);
  gpu.fill_normal(w, 77, 0, 0.05);
  const Tensor x = round_to_half(random_host({kBatch, kWidth}, -1.0, 1.0, 31));
  Tensor x_device = gpu.empty({kBatch, kWidth}, DType::f16, MemoryPurpose::activations);
  gpu.copy_cast(x, x_device);

  // Logits: x [4, 512] . W^T -> [4, rows] in f32.
  Tensor logits = gpu.empty({kBatch, kRows}, DType::f32, MemoryPurpose::activations);
  gpu.gemm(false, true, 1.0, x_device, w, 0.0, logits);
  gpu.synchronize();
  const Tensor logits_host = gpu.to_host(logits);
  for (const std::int64_t first : {std::int64_t{0}, kRows - kChecked}) {
    Tensor want = Tensor::host({kBatch, kChecked}, DType::f32);
    cpu.gemm(false, true, 1.0, half(x), half(host_rows(gpu, w, first, kChecked)), 0.0, want);
    expect_close(columns(logits_host, first, first + kChecked), want, kTolF16,
                 "logits of centre rows from " + std::to_string(first));
  }

  // The centres' gradient: dlogits^T [rows, 4] . x [4, 512] -> [rows, 512] in f16.
  const Tensor dlogits = round_to_half(random_host({kBatch, kRows}, -1.0, 1.0, 32));
  Tensor dlogits_device = gpu.empty({kBatch, kRows}, DType::f16, MemoryPurpose::gradients);
  gpu.copy_cast(dlogits, dlogits_device);
  Tensor grad = gpu.empty({kRows, kWidth}, DType::f16, MemoryPurpose::gradients);
  gpu.gemm(true, false, 1.0, dlogits_device, x_device, 0.0, grad);
  for (const std::int64_t first : {std::int64_t{0}, kRows - kChecked}) {
    Tensor want = Tensor::host({kChecked, kWidth}, DType::f32);
    cpu.gemm(true, false, 1.0, half(columns(dlogits, first, first + kChecked)), half(x), 0.0,
             want);
    expect_close(host_rows(gpu, grad, first, kChecked), want, kTolF16,
                 "gradient rows from " + std::to_string(first));
  }
}

#endif

TEST(GpuLargeGemm, OperandsPastTwoToTheThirtyOneElementsMatchCpu) {
  PFC_REQUIRE_GPU();
#ifdef PFC_HAVE_CUDA
  large_gemms_match_cpu();
#endif
}

}  // namespace
}  // namespace pfc::test
