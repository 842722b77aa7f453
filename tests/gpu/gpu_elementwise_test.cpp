// CUDA data movement, elementwise arithmetic and reductions against the CPU backend:
// fill, fill_normal, cast, copy, add, axpy, scale, add_row_vector, sum_rows, sum_of_squares, all_finite.
#include <cmath>
#include <limits>

#include "core/counter_rng.h"
#include "core/half.h"
#include "gpu_test_support.h"

namespace pfc::test {
namespace {

class GpuElementwise : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { PFC_REQUIRE_GPU(); }
  DType dtype() const { return GetParam(); }
  // Host input as the device will see it (rounded to f16 when the dtype is f16).
  Tensor input(const Shape& shape, double lo, double hi, std::uint64_t seed) const {
    Tensor t = random_host(shape, lo, hi, seed);
    return dtype() == DType::f16 ? round_to_half(t) : t;
  }
};

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuElementwise, ::testing::Values(DType::f32, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST_P(GpuElementwise, FillAndCastRoundTrip) {
  Backend& gpu = gpu_backend();
  Tensor x = gpu.empty({1001}, dtype(), MemoryPurpose::activations);
  gpu.fill(x, 0.3);
  Tensor h = to_host_f32(x);
  const float want = dtype() == DType::f16 ? Half(0.3f).to_float() : 0.3f;
  for (std::int64_t i = 0; i < h.numel(); ++i) ASSERT_EQ(h.data<float>()[i], want) << i;

  // f32 -> dtype -> f32 gives exactly the host's rounding, through every pack/tail path.
  const Tensor src = random_host({3, 337}, -70000.0, 70000.0, 1);
  Tensor d32 = to_device(src, DType::f32);
  Tensor dx = gpu.empty(src.shape(), dtype(), MemoryPurpose::activations);
  Tensor back = gpu.empty(src.shape(), DType::f32, MemoryPurpose::activations);
  gpu.cast(d32, dx);
  gpu.cast(dx, back);
  const Tensor got = to_host_f32(back);
  const Tensor want_all = dtype() == DType::f16 ? round_to_half(src) : src;
  for (std::int64_t i = 0; i < got.numel(); ++i)
    ASSERT_EQ(got.data<float>()[i], want_all.data<float>()[i]) << "element " << i;
}

// The class centres' initial values are drawn on the device: element for element what the CPU
// draws, from any first index (a shard's offset in the global matrix, past 2^32 too), so a
// run's starting point does not depend on where it runs. Both sides round the same f64 maths
// to f32; an ulp of slack covers the device's f64 log/sin/cos.
TEST(GpuDataMovement, FillNormalMatchesTheCpuDraw) {
  PFC_REQUIRE_GPU();
  Backend& gpu = gpu_backend();
  const std::uint64_t key = stream_key(2048, "pfc.weight");
  for (const std::uint64_t first : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{1} << 33}) {
    Tensor d = gpu.empty({1001, 3}, DType::f32, MemoryPurpose::weights);
    gpu.fill_normal(d, key, first, 0.01);
    const Tensor got = to_host_f32(d);
    Tensor want = Tensor::host({1001, 3}, DType::f32);
    cpu_backend().fill_normal(want, key, first, 0.01);
    for (std::int64_t i = 0; i < got.numel(); ++i) {
      const float g = got.data<float>()[i], w = want.data<float>()[i];
      ASSERT_LE(std::fabs(g - w), std::fabs(w) * std::numeric_limits<float>::epsilon())
          << "first " << first << " element " << i;
    }
  }
}

TEST(GpuDataMovement, FillIntegersAndCopyBetweenViews) {
  PFC_REQUIRE_GPU();
  Backend& gpu = gpu_backend();
  Tensor idx = gpu.empty({7}, DType::i64, MemoryPurpose::workspace);
  gpu.fill(idx, -1.0);
  Tensor h = Tensor::host({7}, DType::i64);
  gpu.copy(idx, h);
  gpu.synchronize();
  for (int i = 0; i < 7; ++i) EXPECT_EQ(h.data<std::int64_t>()[i], -1);

  // Device-to-device copy into a row view, and a host-to-host copy through the backend.
  const Tensor src = random_host({4, 5}, -1.0, 1.0, 2);
  Tensor d = to_device(src, DType::f32);
  Tensor big = gpu.zeros({10, 5}, DType::f32, MemoryPurpose::activations);
  Tensor view = big.rows(3, 7);
  gpu.copy(d, view);
  const Tensor got = to_host_f32(big);
  Tensor host_copy = Tensor::host({4, 5}, DType::f32);
  gpu.copy(src, host_copy);
  for (std::int64_t r = 0; r < 10; ++r)
    for (std::int64_t c = 0; c < 5; ++c) {
      const float want = (r >= 3 && r < 7) ? src.data<float>()[(r - 3) * 5 + c] : 0.0f;
      EXPECT_EQ(got.data<float>()[r * 5 + c], want) << r << "," << c;
    }
  for (int i = 0; i < 20; ++i) EXPECT_EQ(host_copy.data<float>()[i], src.data<float>()[i]);
}

TEST_P(GpuElementwise, AddAxpyScale) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const Shape shape{5, 1031};  // odd sizes exercise the scalar tail
  const Tensor a = input(shape, -2.0, 2.0, 3);
  const Tensor b = input(shape, -2.0, 2.0, 4);
  Tensor da = to_device(a, dtype());
  Tensor db = to_device(b, dtype());
  Tensor dy = gpu.empty(shape, dtype(), MemoryPurpose::activations);
  gpu.add(da, db, dy);
  Tensor y = Tensor::host(shape, DType::f32);
  cpu.add(a, b, y);
  expect_close(to_host_f32(dy), y, tolerance(dtype()), "add");

  gpu.axpy(-0.75, da, db);
  Tensor b2 = clone_host(b);
  cpu.axpy(-0.75, a, b2);
  expect_close(to_host_f32(db), b2, tolerance(dtype()), "axpy");

  gpu.scale(da, 1.5);
  Tensor a2 = clone_host(a);
  cpu.scale(a2, 1.5);
  expect_close(to_host_f32(da), a2, tolerance(dtype()), "scale");

  // A view that starts off the packet alignment takes the unaligned path.
  Tensor odd = da.reshape({5 * 1031}).rows(1, 5 * 1031);
  gpu.scale(odd, 2.0);
  Tensor a3 = clone_host(a2);
  for (std::int64_t i = 1; i < a3.numel(); ++i) a3.data<float>()[i] *= 2.0f;
  expect_close(to_host_f32(da), a3, tolerance(dtype()), "scale of an unaligned view");
}

TEST_P(GpuElementwise, RowVectorAndColumnSums) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const Tensor x = input({300, 77}, -1.0, 1.0, 5);
  const Tensor bias = input({77}, -1.0, 1.0, 6);
  Tensor dx = to_device(x, dtype());
  Tensor dbias = to_device(bias, dtype());
  gpu.add_row_vector(dx, dbias);
  Tensor want = clone_host(x);
  cpu.add_row_vector(want, bias);
  expect_close(to_host_f32(dx), want, tolerance(dtype()), "add_row_vector");

  Tensor sums = gpu.empty({77}, DType::f32, MemoryPurpose::gradients);
  gpu.sum_rows(dx, sums);
  Tensor want_sums = Tensor::host({77}, DType::f32);
  cpu.sum_rows(to_host_f32(dx), want_sums);
  expect_close(to_host_f32(sums), want_sums, kTolF32 * 10, "sum_rows");
}

TEST_P(GpuElementwise, SumOfSquaresAndFiniteness) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const Tensor x = input({1 << 20}, -1.0, 1.0, 7);
  Tensor dx = to_device(x, dtype());
  const double want = cpu.sum_of_squares(x);
  EXPECT_NEAR(gpu.sum_of_squares(dx), want, want * 1e-5);
  EXPECT_TRUE(gpu.all_finite(dx));

  for (const float bad :
       {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::quiet_NaN()}) {
    Tensor y = to_device(x, dtype());
    Tensor bad_host = Tensor::host({1}, DType::f32);
    bad_host.data<float>()[0] = bad;
    Tensor one = to_device(bad_host, dtype());
    Tensor slot = y.rows(123457, 123458);
    gpu.copy(one, slot);
    EXPECT_FALSE(gpu.all_finite(y)) << bad;
  }
  // f16 overflow: 70000 is finite in f32 but infinite once stored as f16.
  if (dtype() == DType::f16) {
    Tensor big = to_device(random_host({16}, 70000.0, 70001.0, 8), DType::f16);
    EXPECT_FALSE(gpu.all_finite(big));
  }
}

}  // namespace
}  // namespace pfc::test
