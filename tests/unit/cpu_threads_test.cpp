// The CPU backend's loops on the OpenMP threads compute the same bits on 1, 2 and 3 threads:
// elementwise passes split the elements, per-channel and per-row sums keep their order (they
// are split by channel or by row, never within one), and a whole-tensor sum adds fixed blocks.
// A GEMM is cut into one block of C per thread, and OpenBLAS's sum over k depends a little on
// the size of its call, so GEMMs agree within f32 rounding instead.
// This is what lets a resumed run continue bit for bit at a given thread count, and the
// reference tests hold at any. Sizes are above the threads' grain, so the loops really split.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "model/attention_layout.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

using test::random_uniform;

// The outputs of `run` (fresh host tensors it returns) on `threads` threads.
std::vector<Tensor> on_threads(int threads, const std::function<std::vector<Tensor>()>& run) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  std::vector<Tensor> out = run();
  omp_set_num_threads(before);
  return out;
}

void expect_same_bits_on_any_thread_count(const std::function<std::vector<Tensor>()>& run) {
  const std::vector<Tensor> one = on_threads(1, run);
  for (int threads : {2, 3}) {
    const std::vector<Tensor> many = on_threads(threads, run);
    ASSERT_EQ(one.size(), many.size());
    for (std::size_t i = 0; i < one.size(); ++i)
      EXPECT_EQ(std::memcmp(one[i].raw(), many[i].raw(), one[i].bytes()), 0)
          << "output " << i << " differs on " << threads << " threads";
  }
}

Tensor copy_of(const Tensor& t) {
  Tensor c = Tensor::host(t.shape(), t.dtype());
  std::memcpy(c.raw(), t.raw(), t.bytes());
  return c;
}

constexpr std::int64_t kRows = 3000, kChannels = 48;

TEST(CpuThreads, BatchNormAndPreluAreTheSameOnAnyThreadCount) {
  const Tensor x = random_uniform({kRows, kChannels}, DType::f32, 1);
  const Tensor dy = random_uniform({kRows, kChannels}, DType::f32, 2);
  const Tensor gamma = random_uniform({kChannels}, DType::f32, 3);
  const Tensor beta = random_uniform({kChannels}, DType::f32, 4);
  expect_same_bits_on_any_thread_count([&] {
    CpuBackend b;
    Tensor rm = copy_of(beta), rv = random_uniform({kChannels}, DType::f32, 5, 0.5, 1.5);
    Tensor y = Tensor::host(x.shape(), DType::f32), mean = Tensor::host({kChannels}, DType::f32);
    Tensor invstd = Tensor::host({kChannels}, DType::f32);
    b.batchnorm_forward_train(x, gamma, beta, rm, rv, 0.1, 1e-5, y, mean, invstd);
    Tensor dx = Tensor::host(x.shape(), DType::f32), dg = Tensor::host({kChannels}, DType::f32);
    Tensor db = Tensor::host({kChannels}, DType::f32);
    b.batchnorm_backward(dy, x, gamma, mean, invstd, dx, dg, db);
    Tensor yi = Tensor::host(x.shape(), DType::f32);
    b.batchnorm_forward_inference(x, gamma, beta, rm, rv, 1e-5, yi);
    Tensor py = Tensor::host(x.shape(), DType::f32), pdx = Tensor::host(x.shape(), DType::f32);
    Tensor ds = Tensor::host({kChannels}, DType::f32);
    b.prelu_forward(x, gamma, py);
    b.prelu_backward(dy, x, gamma, pdx, ds);
    return std::vector<Tensor>{y, mean, invstd, rm, rv, dx, dg, db, yi, py, pdx, ds};
  });
}

TEST(CpuThreads, PartialFcPiecesAreTheSameOnAnyThreadCount) {
  const std::int64_t batch = 64, classes = 2000, emb = 512;
  const Tensor emb_x = random_uniform({batch, emb}, DType::f32, 6);
  const Tensor cos = random_uniform({batch, classes}, DType::f32, 7);
  Tensor labels = Tensor::host({batch}, DType::i64);
  for (std::int64_t b = 0; b < batch; ++b)
    labels.data<std::int64_t>()[b] = b % 3 == 0 ? -1 : (b * 37) % classes;
  expect_same_bits_on_any_thread_count([&] {
    CpuBackend b;
    Tensor y = Tensor::host(emb_x.shape(), DType::f32), norms = Tensor::host({batch}, DType::f32);
    b.l2_normalize_rows(emb_x, y, norms);
    Tensor dx = Tensor::host(emb_x.shape(), DType::f32);
    b.l2_normalize_rows_backward(emb_x, y, norms, dx);
    Tensor logits = copy_of(cos), keep = Tensor::host(cos.shape(), DType::u8);
    b.interclass_filter(logits, labels, 0.9, keep);
    Tensor row_max = Tensor::host({batch}, DType::f32), row_sum = Tensor::host({batch}, DType::f32);
    b.margin_logits(logits, labels, MarginParams{}, row_max);
    b.exp_and_row_sum(logits, row_max, row_sum);
    Tensor target = Tensor::host({batch}, DType::f32);
    b.softmax_grad(logits, row_sum, labels, 64.0, batch, target);
    b.interclass_filter_backward(logits, keep);
    Tensor index = Tensor::host({batch}, DType::i64);
    for (std::int64_t i = 0; i < batch; ++i) index.data<std::int64_t>()[i] = (i * 7) % batch;
    Tensor rows = Tensor::host({batch, classes}, DType::f32);
    b.gather_rows(logits, index.reshape({batch}), rows);
    return std::vector<Tensor>{y, norms, dx, keep, logits, row_max, row_sum, target, rows};
  });
}

TEST(CpuThreads, OptimisersCastsAndSumsAreTheSameOnAnyThreadCount) {
  const std::int64_t n = 300001;
  const Tensor w0 = random_uniform({n}, DType::f32, 8);
  const Tensor g = random_uniform({n}, DType::f32, 9);
  expect_same_bits_on_any_thread_count([&] {
    CpuBackend b;
    Tensor w = copy_of(w0), m = random_uniform({n}, DType::f32, 10);
    b.sgd_update(w, g, m, 0.1, 0.9, 5e-4, {});
    Tensor wa = copy_of(w0), ma = copy_of(g), va = random_uniform({n}, DType::f32, 11, 0.0, 1.0);
    b.adamw_update(wa, g, ma, va, AdamWParams{}, {});
    Tensor half = Tensor::host({n}, DType::f16);
    b.cast(w, half);
    Tensor sum = Tensor::host({2}, DType::f64);
    sum.data<double>()[0] = b.sum_of_squares(w);
    sum.data<double>()[1] = b.all_finite(w) ? 1.0 : 0.0;
    Tensor y = Tensor::host({n}, DType::f32);
    b.add(w, g, y);
    b.axpy(0.5, g, y);
    b.scale(y, 3.0);
    return std::vector<Tensor>{w, m, wa, ma, va, half, sum, y};
  });
}

TEST(CpuThreads, GemmsOnAnyThreadCountAgreeWithinRounding) {
  // C cut by rows (m >= n) and by columns, transposed either way, and one row (a matrix-vector
  // product); each above the GEMM's grain, so that it splits.
  struct Product {
    bool ta, tb;
    std::int64_t m, n, k;
  };
  const std::vector<Product> products = {
      {false, false, 300, 250, 200}, {false, false, 70, 500, 200}, {true, false, 300, 250, 200},
      {false, true, 70, 500, 200},   {true, true, 130, 190, 300},  {false, true, 1, 300, 17000}};
  for (std::size_t i = 0; i < products.size(); ++i) {
    const Product& p = products[i];
    const Tensor a = random_uniform(p.ta ? Shape{p.k, p.m} : Shape{p.m, p.k}, DType::f32, 20 + i);
    const Tensor b = random_uniform(p.tb ? Shape{p.n, p.k} : Shape{p.k, p.n}, DType::f32, 40 + i);
    const Tensor c0 = random_uniform({p.m, p.n}, DType::f32, 60 + i);
    auto product = [&] {
      CpuBackend backend;
      Tensor c = copy_of(c0);
      backend.gemm(p.ta, p.tb, 0.5, a, b, 0.25, c);
      return std::vector<Tensor>{c};
    };
    const Tensor one = on_threads(1, product)[0];
    for (int threads : {2, 3}) {
      const Tensor many = on_threads(threads, product)[0];
      double diff = 0.0, norm = 0.0;
      for (std::int64_t e = 0; e < one.numel(); ++e) {
        const double x = one.data<float>()[e], y = many.data<float>()[e];
        diff += (x - y) * (x - y);
        norm += x * x;
      }
      EXPECT_LE(std::sqrt(diff / norm), 1e-6) << "product " << i << " on " << threads << " threads";
    }
  }
}

TEST(CpuThreads, AttentionAndSoftmaxAreTheSameOnAnyThreadCount) {
  // Attention's products are one BLAS call per (sample, head), the pairs split over the threads.
  const AttentionLayout layout{4, 150, 64, 4};
  const std::int64_t tokens = layout.samples * layout.tokens;
  const Tensor qkv = random_uniform({tokens, 3 * layout.width}, DType::f32, 80);
  const std::int64_t rows = layout.samples * layout.heads * layout.tokens;
  const Tensor dy = random_uniform({rows, layout.tokens}, DType::f32, 81);
  expect_same_bits_on_any_thread_count([&] {
    CpuBackend b;
    Tensor scores = Tensor::host(dy.shape(), DType::f32);
    Tensor values = Tensor::host({tokens, layout.width}, DType::f32);
    attention_forward(b, layout, qkv, scores, values);
    Tensor dscores = Tensor::host(dy.shape(), DType::f32);
    b.softmax_rows_backward(dy, scores, dscores);
    return std::vector<Tensor>{scores, values, dscores};
  });
}

}  // namespace
}  // namespace pfc
