// The PartialFC kernels against the CPU backend: L2 normalisation and its backward, row
// gather/scatter, the margin softmax steps and the exact margin gradient, inter-class
// filtering, dense, row-wise and sparse-gradient SGD and AdamW; and the index checks that
// kernels report at synchronize().
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpu_test_support.h"

namespace pfc::test {
namespace {

class GpuPartialFc : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { PFC_REQUIRE_GPU(); }
  DType dtype() const { return GetParam(); }
  Tensor input(const Shape& shape, double lo, double hi, std::uint64_t seed) const {
    return as_stored(random_host(shape, lo, hi, seed));
  }
  // The values as the device stores them in dtype().
  Tensor as_stored(const Tensor& t) const { return dtype() == DType::f16 ? round_to_half(t) : t; }
};

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuPartialFc, ::testing::Values(DType::f32, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST_P(GpuPartialFc, L2NormalizeRowsAndBackward) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  for (const Shape& shape : {Shape{300, 512}, Shape{7, 100}}) {
    const Tensor x = input(shape, -1.0, 1.0, 51);
    Tensor y = Tensor::host(shape, DType::f32), n = Tensor::host({shape[0]}, DType::f32);
    cpu.l2_normalize_rows(x, y, n);
    Tensor dx_ = to_device(x, dtype());
    Tensor dy_ = gpu.empty(shape, dtype(), MemoryPurpose::activations);
    Tensor dn = gpu.empty({shape[0]}, DType::f32, MemoryPurpose::activations);
    gpu.l2_normalize_rows(dx_, dy_, dn);
    expect_close(to_host_f32(dy_), y, tolerance(dtype()), "l2 y " + shape_string(shape));
    expect_close(to_host_f32(dn), n, kTolF32, "l2 norms " + shape_string(shape));

    const Tensor g = input(shape, -1.0, 1.0, 52);
    const Tensor ys = as_stored(y);
    Tensor gx = Tensor::host(shape, DType::f32);
    cpu.l2_normalize_rows_backward(g, ys, n, gx);
    Tensor dg = to_device(g, dtype()), dys = to_device(ys, dtype()), dn2 = to_device(n, DType::f32);
    Tensor dgx = gpu.empty(shape, dtype(), MemoryPurpose::gradients);
    gpu.l2_normalize_rows_backward(dg, dys, dn2, dgx);
    expect_close(to_host_f32(dgx), gx, tolerance(dtype()), "l2 backward " + shape_string(shape));
  }
}

TEST_P(GpuPartialFc, MarginSoftmaxSteps) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const std::int64_t batch = 6, classes = 10000;  // three column chunks per row
  const Tensor labels = host_index({3, -1, 9999, 0, 4096, -1});
  Tensor dlabels = to_device_same(labels);
  const double tol = tolerance(dtype());
  const MarginParams arcface{1.0, 0.5, 0.0, 64.0};
  const MarginParams cosface{1.0, 0.0, 0.4, 64.0};
  for (const MarginParams& m : {arcface, cosface}) {
    const std::string tag = m.m2 > 0 ? "arcface" : "cosface";
    // Cosines slightly beyond [-1, 1] check the clamp.
    const Tensor cos0 = input({batch, classes}, -1.05, 1.05, 61);
    Tensor logits = clone_host(cos0);
    Tensor row_max = Tensor::host({batch}, DType::f32);
    cpu.margin_logits(logits, labels, m, row_max);
    Tensor dlogits = to_device(cos0, dtype());
    Tensor drow_max = gpu.empty({batch}, DType::f32, MemoryPurpose::activations);
    gpu.margin_logits(dlogits, dlabels, m, drow_max);
    expect_close(to_host_f32(dlogits), logits, tol, tag + " margin logits");
    expect_close(to_host_f32(drow_max), row_max, tol, tag + " row max");

    // exp and the row sums, from the same stored logits on both sides.
    const Tensor stored = as_stored(logits);
    Tensor e = clone_host(stored);
    Tensor sums = Tensor::host({batch}, DType::f32);
    cpu.exp_and_row_sum(e, row_max, sums);
    Tensor de = to_device(stored, dtype());
    Tensor dmax = to_device(row_max, DType::f32);
    Tensor dsums = gpu.empty({batch}, DType::f32, MemoryPurpose::activations);
    gpu.exp_and_row_sum(de, dmax, dsums);
    expect_close(to_host_f32(de), e, tol, tag + " exp");
    expect_close(to_host_f32(dsums), sums, tol, tag + " row sums");

    // Probabilities, target probabilities and the gradient, as for a world of 2 ranks.
    const Tensor es = as_stored(e);
    Tensor grad = clone_host(es);
    Tensor target = Tensor::host({batch}, DType::f32);
    cpu.softmax_grad(grad, sums, labels, m.scale, 2 * batch, target);
    Tensor dgrad = to_device(es, dtype());
    Tensor dsums2 = to_device(sums, DType::f32);
    Tensor dtarget = gpu.empty({batch}, DType::f32, MemoryPurpose::activations);
    gpu.softmax_grad(dgrad, dsums2, dlabels, m.scale, 2 * batch, dtarget);
    expect_close(to_host_f32(dgrad), grad, tol, tag + " softmax grad");
    expect_close(to_host_f32(dtarget), target, tol, tag + " target prob");
  }
}

// The exact margin gradient: the factor at each row's target (a label of -1, the first and
// last columns of a row of three column chunks) and the target column times it, for ArcFace
// and CosFace; a cosine beyond 1 is clamped to 1, where the factor is infinite on both.
TEST_P(GpuPartialFc, ExactMarginGradient) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const std::int64_t batch = 6, classes = 10000;
  const Tensor labels = host_index({3, -1, 9999, 0, 4096, -1});
  Tensor dlabels = to_device_same(labels);
  Tensor cos = input({batch, classes}, -0.99, 0.99, 111);
  cos.data<float>()[4 * classes + 4096] = 1.2f;  // clamped to 1: an infinite factor
  for (const MarginParams& m : {MarginParams{1.0, 0.5, 0.0, 64.0}, MarginParams{1.0, 0.0, 0.4, 64.0}}) {
    const std::string tag = m.m2 > 0 ? "arcface" : "cosface";
    Tensor factor = Tensor::host({batch}, DType::f32);
    cpu.margin_gradient_factor(cos, labels, m, factor);
    Tensor dcos = to_device(cos, dtype());
    Tensor dfactor = gpu.empty({batch}, DType::f32, MemoryPurpose::activations);
    gpu.margin_gradient_factor(dcos, dlabels, m, dfactor);
    const Tensor got = to_host_f32(dfactor);
    for (std::int64_t b = 0; b < batch; ++b) {
      const float want = factor.data<float>()[b], have = got.data<float>()[b];
      if (std::isinf(want)) {
        EXPECT_EQ(have, want) << tag << " factor " << b;
      } else {
        EXPECT_NEAR(have, want, kTolF32 * std::max(1.0f, std::fabs(want))) << tag << " factor " << b;
      }
    }
    // The product on the target column, with finite factors.
    Tensor finite = clone_host(factor);
    finite.data<float>()[4] = 3.0f;
    const Tensor g0 = input({batch, classes}, -1.0, 1.0, 112);
    Tensor g = clone_host(g0);
    cpu.scale_target_column(g, labels, finite);
    Tensor dg = to_device(g0, dtype()), dfinite = to_device(finite, DType::f32);
    gpu.scale_target_column(dg, dlabels, dfinite);
    expect_close(to_host_f32(dg), g, tolerance(dtype()), tag + " scaled targets");
  }
}

TEST_P(GpuPartialFc, GatherAndScatterRows) {
  Backend& gpu = gpu_backend();
  // 7 f32 columns move in 4-byte words, 8 f16 or f32 columns in 16-byte ones.
  for (const std::int64_t cols : {7, 8}) {
    const Tensor table = input({50, cols}, -1.0, 1.0, 71);
    const Tensor index = host_index({49, 0, 17, 3, 17});
    Tensor dtable = to_device(table, dtype());
    Tensor dindex = to_device_same(index);
    Tensor out = gpu.empty({5, cols}, dtype(), MemoryPurpose::activations);
    gpu.gather_rows(dtable, dindex, out);
    const Tensor got = to_host_f32(out);
    for (std::int64_t i = 0; i < 5; ++i)
      for (std::int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(got.data<float>()[i * cols + c],
                  table.data<float>()[index.data<std::int64_t>()[i] * cols + c]);

    const Tensor rows = input({3, cols}, 2.0, 3.0, 72);
    const Tensor where = host_index({10, 0, 49});
    Tensor drows = to_device(rows, dtype()), dwhere = to_device_same(where);
    gpu.scatter_rows(drows, dwhere, dtable);
    Tensor want = clone_host(table);
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t c = 0; c < cols; ++c)
        want.data<float>()[where.data<std::int64_t>()[i] * cols + c] =
            rows.data<float>()[i * cols + c];
    expect_close(to_host_f32(dtable), want, 0.0, "scatter_rows");
  }
}

TEST_P(GpuPartialFc, SgdDenseAndRows) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  // Master weights and momentum are f32; the gradient is dtype().
  const Tensor w0 = random_host({100, 64}, -1.0, 1.0, 81);
  const Tensor m0 = random_host({100, 64}, -0.1, 0.1, 82);
  const Tensor g = input({100, 64}, -1.0, 1.0, 83);
  Tensor w = clone_host(w0), m = clone_host(m0);
  cpu.sgd_update(w, g, m, 0.1, 0.9, 5e-4);
  Tensor dw = to_device(w0, DType::f32), dm = to_device(m0, DType::f32), dg = to_device(g, dtype());
  gpu.sgd_update(dw, dg, dm, 0.1, 0.9, 5e-4);
  expect_close(to_host_f32(dw), w, kTolF32, "sgd w");
  expect_close(to_host_f32(dm), m, kTolF32, "sgd m");

  const Tensor index = host_index({5, 17, 99, 0});
  const Tensor gr = input({4, 64}, -1.0, 1.0, 84);
  Tensor w2 = clone_host(w0), m2 = clone_host(m0);
  cpu.sgd_update_rows(w2, m2, index, gr, 0.2, 0.9, 5e-4);
  Tensor dw2 = to_device(w0, DType::f32), dm2 = to_device(m0, DType::f32);
  Tensor dindex = to_device_same(index), dgr = to_device(gr, dtype());
  gpu.sgd_update_rows(dw2, dm2, dindex, dgr, 0.2, 0.9, 5e-4);
  expect_close(to_host_f32(dw2), w2, kTolF32, "sgd rows w");
  expect_close(to_host_f32(dm2), m2, kTolF32, "sgd rows m");
}

TEST_P(GpuPartialFc, AdamWDenseAndRows) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  // f32 masters and moments; the gradient is dtype(). Step 3, past the first update's
  // bias correction; a second moment near 0 where eps matters.
  AdamWParams p;
  p.lr = 0.01;
  p.weight_decay = 0.1;
  p.step = 3;
  const Tensor w0 = random_host({100, 64}, -1.0, 1.0, 91);
  const Tensor m0 = random_host({100, 64}, -0.1, 0.1, 92);
  const Tensor v0 = random_host({100, 64}, 0.0, 1e-6, 93);
  const Tensor g = input({100, 64}, -1.0, 1.0, 94);
  Tensor w = clone_host(w0), m = clone_host(m0), v = clone_host(v0);
  cpu.adamw_update(w, g, m, v, p);
  Tensor dw = to_device(w0, DType::f32), dm = to_device(m0, DType::f32);
  Tensor dv = to_device(v0, DType::f32), dg = to_device(g, dtype());
  gpu.adamw_update(dw, dg, dm, dv, p);
  expect_close(to_host_f32(dw), w, kTolF32, "adamw w");
  expect_close(to_host_f32(dm), m, kTolF32, "adamw m");
  expect_close(to_host_f32(dv), v, kTolF32, "adamw v");

  const Tensor index = host_index({5, 17, 99, 0});
  const Tensor gr = input({4, 64}, -1.0, 1.0, 95);
  Tensor w2 = clone_host(w0), m2 = clone_host(m0), v2 = clone_host(v0);
  cpu.adamw_update_rows(w2, m2, v2, index, gr, p);
  Tensor dw2 = to_device(w0, DType::f32), dm2 = to_device(m0, DType::f32);
  Tensor dv2 = to_device(v0, DType::f32);
  Tensor dindex = to_device_same(index), dgr = to_device(gr, dtype());
  gpu.adamw_update_rows(dw2, dm2, dv2, dindex, dgr, p);
  expect_close(to_host_f32(dw2), w2, kTolF32, "adamw rows w");
  expect_close(to_host_f32(dm2), m2, kTolF32, "adamw rows m");
  expect_close(to_host_f32(dv2), v2, kTolF32, "adamw rows v");
}

// SGD and AdamW of the whole table with a gradient on some rows (PartialFC_V2's dense centres):
// 3000 rows, so each block walks a share of several rows; gradient rows at both ends, in one
// share only, none at all (every row still decays).
TEST_P(GpuPartialFc, SgdAndAdamWWithASparseGradient) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const std::int64_t rows = 3000, cols = 64;
  AdamWParams p;
  p.lr = 0.01;
  p.weight_decay = 0.1;
  p.step = 3;
  const Tensor w0 = random_host({rows, cols}, -1.0, 1.0, 121);
  const Tensor m0 = random_host({rows, cols}, -0.1, 0.1, 122);
  const Tensor v0 = random_host({rows, cols}, 0.0, 1e-6, 123);
  for (const std::vector<std::int64_t>& sampled :
       {std::vector<std::int64_t>{0, 1, 2, 57, 1500, 2997, 2998, 2999},
        std::vector<std::int64_t>{1200, 1201}, std::vector<std::int64_t>{}}) {
    const std::string tag = std::to_string(sampled.size()) + " gradient rows";
    const Tensor index = host_index(sampled);
    const Tensor g = input({static_cast<std::int64_t>(sampled.size()), cols}, -1.0, 1.0, 124);
    Tensor dindex = to_device_same(index), dg = to_device(g, dtype());

    Tensor w = clone_host(w0), m = clone_host(m0);
    cpu.sgd_update_sparse_grad(w, m, index, g, 0.1, 0.9, 5e-4);
    Tensor dw = to_device(w0, DType::f32), dm = to_device(m0, DType::f32);
    gpu.sgd_update_sparse_grad(dw, dm, dindex, dg, 0.1, 0.9, 5e-4);
    expect_close(to_host_f32(dw), w, kTolF32, "sgd w, " + tag);
    expect_close(to_host_f32(dm), m, kTolF32, "sgd m, " + tag);

    Tensor w2 = clone_host(w0), m2 = clone_host(m0), v2 = clone_host(v0);
    cpu.adamw_update_sparse_grad(w2, m2, v2, index, g, p);
    Tensor dw2 = to_device(w0, DType::f32), dm2 = to_device(m0, DType::f32);
    Tensor dv2 = to_device(v0, DType::f32);
    gpu.adamw_update_sparse_grad(dw2, dm2, dv2, dindex, dg, p);
    expect_close(to_host_f32(dw2), w2, kTolF32, "adamw w, " + tag);
    expect_close(to_host_f32(dm2), m2, kTolF32, "adamw m, " + tag);
    expect_close(to_host_f32(dv2), v2, kTolF32, "adamw v, " + tag);
  }
}

// Inter-class filtering and its backward, f32 and f16 cosines, every label kind: a target in
// the shard (above and below the threshold), none (-1), the last column; the CUDA backend
// refuses f64 as its operand rules say.
TEST_P(GpuPartialFc, InterclassFilterAndBackward) {
  Backend& gpu = gpu_backend();
  CpuBackend& cpu = cpu_backend();
  const std::int64_t batch = 5, classes = 3000;
  const Tensor labels = host_index({3, -1, 2999, 0, 1500});
  // The CPU filters the values the device stores (f16 rounded), compared in f64 on both.
  const Tensor cos0 = input({batch, classes}, -1.0, 1.0, 101);
  Tensor cos = clone_host(cos0);
  Tensor keep = Tensor::host({batch, classes}, DType::u8);
  cpu.interclass_filter(cos, labels, 0.3, keep);
  const Tensor grad0 = input({batch, classes}, -1.0, 1.0, 102);
  Tensor grad = clone_host(grad0);
  cpu.interclass_filter_backward(grad, keep);

  Tensor dcos = to_device(cos0, dtype()), dlabels = to_device_same(labels);
  Tensor dkeep = gpu.empty({batch, classes}, DType::u8, MemoryPurpose::activations);
  gpu.interclass_filter(dcos, dlabels, 0.3, dkeep);
  Tensor dgrad = to_device(grad0, dtype());
  gpu.interclass_filter_backward(dgrad, dkeep);
  expect_close(to_host_f32(dcos), cos, 0.0, "filtered cos");
  expect_close(to_host_f32(dgrad), grad, 0.0, "filtered grad");
  const Tensor got_keep = gpu.to_host(dkeep);
  for (std::int64_t i = 0; i < keep.numel(); ++i)
    ASSERT_EQ(got_keep.data<std::uint8_t>()[i], keep.data<std::uint8_t>()[i]) << "keep " << i;

  Tensor wide = gpu.zeros({batch, classes}, DType::f64, MemoryPurpose::activations);
  EXPECT_THROW(gpu.interclass_filter(wide, dlabels, 0.3, dkeep), Error);
}

TEST(GpuPartialFcChecks, BadIndicesAreReportedAtSynchronize) {
  PFC_REQUIRE_GPU();
  Backend& gpu = gpu_backend();
  Tensor table = gpu.zeros({10, 4}, DType::f32, MemoryPurpose::weights);
  Tensor out = gpu.zeros({2, 4}, DType::f32, MemoryPurpose::activations);
  Tensor bad = to_device_same(host_index({3, 10}));
  gpu.gather_rows(table, bad, out);
  try {
    gpu.synchronize();
    FAIL() << "an out-of-range gather index was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gather_rows"), std::string::npos) << e.what();
  }
  gpu.synchronize();  // the report clears the flag

  Tensor logits = gpu.zeros({1, 5}, DType::f32, MemoryPurpose::activations);
  Tensor row_max = gpu.empty({1}, DType::f32, MemoryPurpose::activations);
  Tensor label = to_device_same(host_index({5}));
  gpu.margin_logits(logits, label, MarginParams{}, row_max);
  EXPECT_THROW(gpu.synchronize(), Error);
  gpu.synchronize();

  Tensor keep = gpu.empty({1, 5}, DType::u8, MemoryPurpose::activations);
  gpu.interclass_filter(logits, label, 0.1, keep);
  EXPECT_THROW(gpu.synchronize(), Error);
  gpu.synchronize();

  Tensor w = gpu.zeros({10, 4}, DType::f32, MemoryPurpose::weights);
  Tensor m = gpu.zeros({10, 4}, DType::f32, MemoryPurpose::optimizer);
  Tensor v = gpu.zeros({10, 4}, DType::f32, MemoryPurpose::optimizer);
  Tensor g = gpu.zeros({2, 4}, DType::f32, MemoryPurpose::gradients);
  gpu.adamw_update_rows(w, m, v, bad, g, AdamWParams{});
  try {
    gpu.synchronize();
    FAIL() << "an out-of-range AdamW row index was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("adamw_update_rows"), std::string::npos) << e.what();
  }
  gpu.synchronize();

  // A sparse gradient's rows must be sorted and unique.
  Tensor unsorted = to_device_same(host_index({3, 2}));
  gpu.sgd_update_sparse_grad(w, m, unsorted, g, 0.1, 0.9, 5e-4);
  try {
    gpu.synchronize();
    FAIL() << "an unsorted sparse-gradient index was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sgd_update_sparse_grad"), std::string::npos)
        << e.what();
  }
  gpu.synchronize();
  gpu.margin_gradient_factor(logits, label, MarginParams{}, row_max);
  EXPECT_THROW(gpu.synchronize(), Error);
  gpu.synchronize();
}

}  // namespace
}  // namespace pfc::test
