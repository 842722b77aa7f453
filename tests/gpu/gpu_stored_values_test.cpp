// Stored 16-bit class centres (classifier_storage) on the GPU against the CPU backend: drawing
// and casting f16 and bf16, normalising stored rows into f32, SGD and AdamW on stored weights
// and moments (dense and by rows, stochastically rounded with the same bits: equal to the CPU's
// but where the CUDA kernels' fused multiply-adds move the f32 value across a rounding
// threshold, one 16-bit step at most, rarely), the in-place normalisation backward, and a
// batch-norm's output recomputed from its saved statistics (bit for bit the training
// forward's).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/host_cast.h"
#include "gpu_test_support.h"

namespace pfc::test {
namespace {

class GpuStoredValues : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { PFC_REQUIRE_GPU(); }
  DType stored() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Stored, GpuStoredValues, ::testing::Values(DType::f16, DType::bf16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// A host tensor of `stored` values rounded to nearest from f32 ones.
Tensor host_stored(const Tensor& host_f32, DType stored) {
  Tensor h = Tensor::host(host_f32.shape(), stored);
  host_cast(host_f32, h);
  return h;
}

Tensor device_copy_to_host(const Tensor& device) {
  Tensor h = Tensor::host(device.shape(), device.dtype());
  gpu_backend().copy(device, h);
  gpu_backend().synchronize();
  return h;
}

// Stored tensors of the GPU and the CPU: every element equal, or (a rounding decision the
// f32 value's last bit moved) one 16-bit step apart, in at most 1 % of the elements.
void expect_same_rounding(const Tensor& gpu_host, const Tensor& cpu_host, const std::string& what) {
  const auto* a = static_cast<const std::uint16_t*>(gpu_host.raw());
  const auto* b = static_cast<const std::uint16_t*>(cpu_host.raw());
  std::int64_t differ = 0;
  for (std::int64_t i = 0; i < gpu_host.numel(); ++i) {
    if (a[i] == b[i]) continue;
    ++differ;
    ASSERT_LE(std::abs(static_cast<int>(a[i]) - static_cast<int>(b[i])), 1)
        << what << " element " << i;
  }
  EXPECT_LE(differ, gpu_host.numel() / 100) << what << ": " << differ << " elements differ";
}

TEST_P(GpuStoredValues, FillNormalAndCastMatchTheCpuBitForBit) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  Tensor d = gpu.empty({1000, 64}, stored(), MemoryPurpose::weights);
  gpu.fill_normal(d, 1234, 640, 0.01);
  Tensor want = Tensor::host({1000, 64}, stored());
  cpu.fill_normal(want, 1234, 640, 0.01);
  const Tensor got = device_copy_to_host(d);
  EXPECT_EQ(std::memcmp(got.raw(), want.raw(), got.bytes()), 0) << "fill_normal";

  const Tensor x = random_host({777}, -3.0, 3.0, 7);
  Tensor dx = to_device(x, DType::f32), ds = gpu.empty({777}, stored(), MemoryPurpose::activations);
  gpu.cast(dx, ds);
  const Tensor cast = device_copy_to_host(ds);
  const Tensor expected = host_stored(x, stored());
  EXPECT_EQ(std::memcmp(cast.raw(), expected.raw(), cast.bytes()), 0) << "cast";
  Tensor back = gpu.empty({777}, DType::f32, MemoryPurpose::activations);
  gpu.cast(ds, back);
  Tensor want_back = Tensor::host({777}, DType::f32);
  host_cast(expected, want_back);
  expect_close(to_host_f32(back), want_back, 0.0, "cast back");
}

TEST_P(GpuStoredValues, NormalisesStoredRowsIntoF32AndBackwardInPlace) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const Tensor x = host_stored(random_host({300, 512}, -0.05, 0.05, 11), stored());
  Tensor y = Tensor::host({300, 512}, DType::f32), n = Tensor::host({300}, DType::f32);
  cpu.l2_normalize_rows(x, y, n);
  Tensor dx = to_device_same(x);
  Tensor dy = gpu.empty({300, 512}, DType::f32, MemoryPurpose::activations);
  Tensor dn = gpu.empty({300}, DType::f32, MemoryPurpose::activations);
  gpu.l2_normalize_rows(dx, dy, dn);
  expect_close(to_host_f32(dy), y, kTolF32, "y");
  expect_close(to_host_f32(dn), n, kTolF32, "norms");
  // The backward in place equals the one into another buffer.
  const Tensor g = random_host({300, 512}, -1.0, 1.0, 12);
  Tensor dg = to_device(g, DType::f32), dout = gpu.empty({300, 512}, DType::f32,
                                                          MemoryPurpose::gradients);
  gpu.l2_normalize_rows_backward(dg, dy, dn, dout);
  gpu.l2_normalize_rows_backward(dg, dy, dn, dg);
  expect_close(to_host_f32(dg), to_host_f32(dout), 0.0, "in place");
}

TEST_P(GpuStoredValues, SgdOnStoredCentresRoundsAsTheCpu) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const Tensor w0 = host_stored(random_host({200, 128}, -0.03, 0.03, 21), stored());
  const Tensor m0 = host_stored(random_host({200, 128}, -1e-4, 1e-4, 22), stored());
  const Tensor g = random_host({200, 128}, -1e-4, 1e-4, 23);
  const StochasticRounding rounding{99, 1000};
  Tensor w = Tensor::host(w0.shape(), stored()), m = Tensor::host(m0.shape(), stored());
  cpu.copy(w0, w);
  cpu.copy(m0, m);
  cpu.sgd_update(w, g, m, 0.2, 0.9, 5e-4, rounding);
  Tensor dw = to_device_same(w0), dm = to_device_same(m0), dg = to_device(g, DType::f32);
  gpu.sgd_update(dw, dg, dm, 0.2, 0.9, 5e-4, rounding);
  expect_same_rounding(device_copy_to_host(dw), w, "sgd w");
  expect_same_rounding(device_copy_to_host(dm), m, "sgd m");

  const Tensor index = host_index({5, 17, 199, 0});
  const Tensor gr = random_host({4, 128}, -1e-4, 1e-4, 24);
  cpu.copy(w0, w);
  cpu.copy(m0, m);
  cpu.sgd_update_rows(w, m, index, gr, 0.2, 0.9, 5e-4, rounding);
  Tensor dw2 = to_device_same(w0), dm2 = to_device_same(m0);
  Tensor dindex = to_device_same(index), dgr = to_device(gr, DType::f32);
  gpu.sgd_update_rows(dw2, dm2, dindex, dgr, 0.2, 0.9, 5e-4, rounding);
  expect_same_rounding(device_copy_to_host(dw2), w, "sgd rows w");
  expect_same_rounding(device_copy_to_host(dm2), m, "sgd rows m");

  // The sparse-gradient form (sorted index): every row moves.
  const Tensor sorted = host_index({0, 5, 17, 199});
  cpu.copy(w0, w);
  cpu.copy(m0, m);
  cpu.sgd_update_sparse_grad(w, m, sorted, gr, 0.2, 0.9, 5e-4, rounding);
  Tensor dw3 = to_device_same(w0), dm3 = to_device_same(m0), dsorted = to_device_same(sorted);
  gpu.sgd_update_sparse_grad(dw3, dm3, dsorted, dgr, 0.2, 0.9, 5e-4, rounding);
  expect_same_rounding(device_copy_to_host(dw3), w, "sgd sparse-gradient w");
  expect_same_rounding(device_copy_to_host(dm3), m, "sgd sparse-gradient m");
}

TEST_P(GpuStoredValues, AdamWOnStoredCentresRoundsAsTheCpu) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  // AdamW's moments are bf16 beside either type of centres (optim/classifier_storage.h).
  AdamWParams p;
  p.lr = 1e-3;
  p.weight_decay = 0.1;
  p.step = 4;
  const Tensor w0 = host_stored(random_host({100, 64}, -0.03, 0.03, 31), stored());
  const Tensor m0 = host_stored(random_host({100, 64}, -1e-5, 1e-5, 32), DType::bf16);
  const Tensor v0 = host_stored(random_host({100, 64}, 0.0, 1e-10, 33), DType::bf16);
  const Tensor gr = random_host({4, 64}, -1e-5, 1e-5, 34);
  const Tensor index = host_index({3, 50, 99, 0});
  const StochasticRounding rounding{7, 12};
  Tensor w = Tensor::host(w0.shape(), stored()), m = Tensor::host(m0.shape(), DType::bf16),
         v = Tensor::host(v0.shape(), DType::bf16);
  cpu.copy(w0, w);
  cpu.copy(m0, m);
  cpu.copy(v0, v);
  cpu.adamw_update_rows(w, m, v, index, gr, p, rounding);
  Tensor dw = to_device_same(w0), dm = to_device_same(m0), dv = to_device_same(v0);
  Tensor dindex = to_device_same(index), dgr = to_device(gr, DType::f32);
  gpu.adamw_update_rows(dw, dm, dv, dindex, dgr, p, rounding);
  expect_same_rounding(device_copy_to_host(dw), w, "adamw rows w");
  expect_same_rounding(device_copy_to_host(dm), m, "adamw rows m");
  expect_same_rounding(device_copy_to_host(dv), v, "adamw rows v");

  const Tensor sorted = host_index({0, 3, 50, 99});
  cpu.copy(w0, w);
  cpu.copy(m0, m);
  cpu.copy(v0, v);
  cpu.adamw_update_sparse_grad(w, m, v, sorted, gr, p, rounding);
  Tensor dw2 = to_device_same(w0), dm2 = to_device_same(m0), dv2 = to_device_same(v0);
  Tensor dsorted = to_device_same(sorted);
  gpu.adamw_update_sparse_grad(dw2, dm2, dv2, dsorted, dgr, p, rounding);
  expect_same_rounding(device_copy_to_host(dw2), w, "adamw sparse-gradient w");
  expect_same_rounding(device_copy_to_host(dm2), m, "adamw sparse-gradient m");
  expect_same_rounding(device_copy_to_host(dv2), v, "adamw sparse-gradient v");
}

TEST(GpuBatchNormSaved, RecomputesTheTrainingForwardsOutputBitForBit) {
  PFC_REQUIRE_GPU();
  Backend& gpu = gpu_backend();
  for (DType act : {DType::f32, DType::f16}) {
    const std::int64_t rows = 4000, channels = 64;
    Tensor x = to_device(random_host({rows, channels}, -2.0, 3.0, 41), act);
    Tensor gamma = to_device(random_host({channels}, 0.5, 1.5, 42), DType::f32);
    Tensor beta = to_device(random_host({channels}, -0.5, 0.5, 43), DType::f32);
    Tensor rm = to_device(random_host({channels}, 0, 0, 44), DType::f32);
    Tensor rv = to_device(random_host({channels}, 1, 1, 45), DType::f32);
    Tensor y = gpu.empty({rows, channels}, act, MemoryPurpose::activations);
    Tensor again = gpu.empty({rows, channels}, act, MemoryPurpose::activations);
    Tensor mean = gpu.empty({channels}, DType::f32, MemoryPurpose::activations);
    Tensor invstd = gpu.empty({channels}, DType::f32, MemoryPurpose::activations);
    gpu.batchnorm_forward_train(x, gamma, beta, rm, rv, 0.1, 1e-5, y, mean, invstd);
    gpu.batchnorm_forward_saved(x, gamma, beta, mean, invstd, again);
    expect_close(to_host_f32(again), to_host_f32(y), 0.0, std::string(dtype_name(act)));
  }
}

}  // namespace
}  // namespace pfc::test
