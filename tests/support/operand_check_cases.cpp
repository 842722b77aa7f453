#include "support/operand_check_cases.h"

#include "core/error.h"

namespace pfc::test {

namespace {

// Zeros: valid indices and labels, so that only the operands' shapes, types and places decide.
Tensor t(Backend& b, const Shape& shape, DType dtype) {
  return b.zeros(shape, dtype, MemoryPurpose::activations);
}

// 6x6 maps, a 3x3 kernel of stride 2: `in` channels to `out` in `groups` groups.
Conv2dGeometry geometry(std::int64_t in, std::int64_t out, std::int64_t groups) {
  Conv2dGeometry g;
  g.batch = 2;
  g.in_h = g.in_w = 6;
  g.in_channels = in;
  g.out_channels = out;
  g.groups = groups;
  g.kernel = 3;
  g.stride = 2;
  g.pad = 1;
  return g;
}

void conv(Backend& b, DType dtype, const Shape& filter,
          const Conv2dGeometry& g = geometry(3, 4, 1)) {
  Tensor x = t(b, g.input_shape(), dtype), w = t(b, filter, dtype),
         y = t(b, g.output_shape(), dtype);
  b.conv2d_forward(g, x, w, y);
  b.conv2d_backward_data(g, y, w, x);
  b.conv2d_backward_filter(g, x, y, w);
}

// The three directions on `operands` (x, w, dy) writing `result` (y, dx, dw).
void conv_products(Backend& b, DType operands, DType result) {
  const Conv2dGeometry g = geometry(3, 4, 1);
  Tensor x = t(b, g.input_shape(), operands), w = t(b, g.filter_shape(), operands),
         dy = t(b, g.output_shape(), operands);
  Tensor y = t(b, g.output_shape(), result), dx = t(b, g.input_shape(), result),
         dw = t(b, g.filter_shape(), result);
  b.conv2d_forward(g, x, w, y);
  b.conv2d_backward_data(g, dy, w, dx);
  b.conv2d_backward_filter(g, x, dy, dw);
}

void batchnorm(Backend& b, DType x_type, DType param_type, std::int64_t rows) {
  Tensor x = t(b, {rows, 5}, x_type), y = t(b, {rows, 5}, x_type);
  Tensor p[6];
  for (Tensor& v : p) v = t(b, {5}, param_type);
  b.batchnorm_forward_train(x, p[0], p[1], p[2], p[3], 0.1, 1e-5, y, p[4], p[5]);
  Tensor dx = t(b, {rows, 5}, x_type);
  b.batchnorm_backward(y, x, p[0], p[4], p[5], dx, p[1], p[2]);
}

void gemm(Backend& b, DType ab, DType c_type, std::int64_t k_of_b) {
  Tensor a = t(b, {3, 4}, ab), bb = t(b, {k_of_b, 5}, ab), c = t(b, {3, 5}, c_type);
  b.gemm(false, false, 1.0, a, bb, 0.0, c);
}

void softmax(Backend& b, DType logits_type, DType row_type, std::int64_t global_batch) {
  Tensor cos = t(b, {4, 7}, logits_type);
  Tensor label = t(b, {4}, DType::i64), row = t(b, {4}, row_type), sum = t(b, {4}, row_type);
  Tensor prob = t(b, {4}, row_type);
  b.margin_logits(cos, label, MarginParams{}, row);
  b.exp_and_row_sum(cos, row, sum);
  b.softmax_grad(cos, sum, label, 64.0, global_batch, prob);
}

// q kᵀ of 2 samples x 3 heads of 7 tokens from qkv [2, 7, 36] into scores [c_rows, 7], of the
// operands' type or another.
void batched_scores(Backend& b, DType dtype, std::int64_t c_rows, DType scores_type) {
  BatchedGemmGeometry g;
  g.outer = 2;
  g.inner = 3;
  g.m = g.n = 7;
  g.k = 4;
  g.transpose_b = true;
  g.a = {0, 36, 7 * 36, 4};
  g.b = {12, 36, 7 * 36, 4};
  g.c = {0, 7, 3 * 49, 49};
  Tensor qkv = t(b, {2, 7, 36}, dtype), scores = t(b, {c_rows, 7}, scores_type);
  b.batched_gemm(g, 0.5, qkv, qkv, 0.0, scores);
}

// LayerNorm of x [2, 3, 5] forward and backward: parameters and per-row statistics typed apart.
void layernorm(Backend& b, DType x_type, DType param_type, DType row_type) {
  Tensor x = t(b, {2, 3, 5}, x_type), y = t(b, {2, 3, 5}, x_type);
  Tensor gamma = t(b, {5}, param_type), beta = t(b, {5}, param_type);
  Tensor mean = t(b, {6}, row_type), invstd = t(b, {6}, row_type);
  b.layernorm_forward(x, gamma, beta, 1e-6, y, mean, invstd);
  b.layernorm_backward(y, x, gamma, mean, invstd, x, gamma, beta);
}

// Softmax rows, ReLU6 and DropPath's scaling of x [5, 6], with `factors` per-sample factors.
void attention_pieces(Backend& b, DType dtype, std::int64_t factors) {
  Tensor x = t(b, {5, 6}, dtype), dy = t(b, {5, 6}, dtype);
  b.softmax_rows_forward(x, x);
  b.softmax_rows_backward(dy, x, dy);
  b.relu6_forward(x, x);
  b.relu6_backward(dy, x, dy);
  Tensor factor = t(b, {factors}, DType::f32);
  b.scale_samples(x, factor, x);
}

void rows(Backend& b, DType index_type, std::int64_t picked) {
  Tensor table = t(b, {6, 3}, DType::f32), out = t(b, {picked, 3}, DType::f32);
  Tensor index = t(b, {2}, index_type);
  b.gather_rows(table, index, out);
  b.scatter_rows(out, index, table);
}

}  // namespace

std::vector<OperandCase> operand_check_cases() {
  return {
      {"copy f32 -> f32",
       [](Backend& b) {
         Tensor s = t(b, {6}, DType::f32), d = t(b, {2, 3}, DType::f32);
         b.copy(s, d);
       }},
      {"copy of another length",
       [](Backend& b) {
         Tensor s = t(b, {6}, DType::f32), d = t(b, {5}, DType::f32);
         b.copy(s, d);
       }},
      {"copy f32 -> f16",
       [](Backend& b) {
         Tensor s = t(b, {6}, DType::f32), d = t(b, {6}, DType::f16);
         b.copy(s, d);
       }},
      {"cast f32 -> f16",
       [](Backend& b) {
         Tensor s = t(b, {6}, DType::f32), d = t(b, {6}, DType::f16);
         b.cast(s, d);
       }},
      {"cast i32 -> f32",
       [](Backend& b) {
         Tensor s = t(b, {6}, DType::i32), d = t(b, {6}, DType::f32);
         b.cast(s, d);
       }},
      {"cast bf16 -> f32 -> bf16",
       [](Backend& b) {
         Tensor s = t(b, {6}, DType::bf16), d = t(b, {6}, DType::f32);
         b.cast(s, d);
         b.cast(d, s);
       }},
      {"fill_normal f16 and bf16",
       [](Backend& b) {
         Tensor x = t(b, {6}, DType::f16), y = t(b, {6}, DType::bf16);
         b.fill_normal(x, 1, 0, 1.0);
         b.fill_normal(y, 1, 0, 1.0);
       }},
      {"fill_normal f64",
       [](Backend& b) {
         Tensor x = t(b, {6}, DType::f64);
         b.fill_normal(x, 1, 0, 1.0);
       }},
      {"conv f32",
       [](Backend& b) {
         conv(b, DType::f32, {4, 3, 3, 3});
       }},
      {"conv f16",
       [](Backend& b) {
         conv(b, DType::f16, {4, 3, 3, 3});
       }},
      {"conv f64",
       [](Backend& b) {
         conv(b, DType::f64, {4, 3, 3, 3});
       }},
      {"conv bf16 -> f32", [](Backend& b) { conv_products(b, DType::bf16, DType::f32); }},
      {"conv bf16 -> bf16", [](Backend& b) { conv_products(b, DType::bf16, DType::bf16); }},
      {"conv with an OIHW filter",
       [](Backend& b) {
         conv(b, DType::f32, {4, 3, 3, 3 + 1});
       }},
      {"grouped conv f32",
       [](Backend& b) {
         conv(b, DType::f32, {6, 3, 3, 2}, geometry(4, 6, 2));
       }},
      {"depthwise conv f16",
       [](Backend& b) {
         conv(b, DType::f16, {4, 3, 3, 1}, geometry(4, 4, 4));
       }},
      {"grouped conv with a dense filter",
       [](Backend& b) {
         conv(b, DType::f32, {6, 3, 3, 4}, geometry(4, 6, 2));
       }},
      {"conv of groups that do not divide the channels",
       [](Backend& b) {
         conv(b, DType::f32, {4, 3, 3, 1}, geometry(3, 4, 3));
       }},
      {"batchnorm f32", [](Backend& b) { batchnorm(b, DType::f32, DType::f32, 8); }},
      {"batchnorm f16 x, f32 parameters",
       [](Backend& b) { batchnorm(b, DType::f16, DType::f32, 8); }},
      {"batchnorm f32 x, f64 parameters",
       [](Backend& b) { batchnorm(b, DType::f32, DType::f64, 8); }},
      {"batchnorm f64 x, f64 parameters",
       [](Backend& b) { batchnorm(b, DType::f64, DType::f64, 8); }},
      {"batchnorm of one row", [](Backend& b) { batchnorm(b, DType::f32, DType::f32, 1); }},
      {"prelu of a vector x",
       [](Backend& b) {
         Tensor x = t(b, {4}, DType::f32), s = t(b, {4}, DType::f32), y = t(b, {4}, DType::f32);
         b.prelu_forward(x, s, y);
       }},
      {"prelu of an NHWC map",
       [](Backend& b) {
         Tensor x = t(b, {2, 3, 4}, DType::f32), s = t(b, {4}, DType::f32),
                y = t(b, {2, 3, 4}, DType::f32);
         b.prelu_forward(x, s, y);
       }},
      {"scale f16",
       [](Backend& b) {
         Tensor x = t(b, {6}, DType::f16);
         b.scale(x, 2.0);
       }},
      {"scale f64",
       [](Backend& b) {
         Tensor x = t(b, {6}, DType::f64);
         b.scale(x, 2.0);
       }},
      {"add of two shapes",
       [](Backend& b) {
         Tensor a = t(b, {6}, DType::f32), c = t(b, {2, 3}, DType::f32);
         b.add(a, c, a);
       }},
      {"axpy f16 into f32",
       [](Backend& b) {
         Tensor x = t(b, {6}, DType::f16), y = t(b, {6}, DType::f32);
         b.axpy(0.5, x, y);
       }},
      {"gemm f32", [](Backend& b) { gemm(b, DType::f32, DType::f32, 4); }},
      {"gemm f16 -> f32", [](Backend& b) { gemm(b, DType::f16, DType::f32, 4); }},
      {"gemm f16 -> f16", [](Backend& b) { gemm(b, DType::f16, DType::f16, 4); }},
      {"gemm bf16 -> f32", [](Backend& b) { gemm(b, DType::bf16, DType::f32, 4); }},
      {"gemm bf16 -> bf16", [](Backend& b) { gemm(b, DType::bf16, DType::bf16, 4); }},
      {"gemm with inner dimensions that differ",
       [](Backend& b) { gemm(b, DType::f32, DType::f32, 3); }},
      {"add_row_vector of a short bias",
       [](Backend& b) {
         Tensor x = t(b, {3, 5}, DType::f32), v = t(b, {4}, DType::f32);
         b.add_row_vector(x, v);
       }},
      {"sum_rows into f16",
       [](Backend& b) {
         Tensor x = t(b, {3, 5}, DType::f32), o = t(b, {5}, DType::f16);
         b.sum_rows(x, o);
       }},
      {"l2 norms f32",
       [](Backend& b) {
         Tensor x = t(b, {3, 5}, DType::f32), y = t(b, {3, 5}, DType::f32),
                n = t(b, {3}, DType::f32);
         b.l2_normalize_rows(x, y, n);
         b.l2_normalize_rows_backward(y, y, n, x);
       }},
      {"l2 of f64 rows, f32 norms",
       [](Backend& b) {
         Tensor x = t(b, {3, 5}, DType::f64), y = t(b, {3, 5}, DType::f64),
                n = t(b, {3}, DType::f32);
         b.l2_normalize_rows(x, y, n);
       }},
      {"l2 of stored f16 and bf16 rows into f32, and the backward in place",
       [](Backend& b) {
         for (DType stored : {DType::f16, DType::bf16}) {
           Tensor x = t(b, {3, 5}, stored), y = t(b, {3, 5}, DType::f32),
                  n = t(b, {3}, DType::f32), d = t(b, {3, 5}, DType::f32);
           b.l2_normalize_rows(x, y, n);
           b.l2_normalize_rows_backward(d, y, n, d);
         }
       }},
      {"l2 of stored bf16 rows into bf16",
       [](Backend& b) {
         Tensor x = t(b, {3, 5}, DType::bf16), y = t(b, {3, 5}, DType::bf16),
                n = t(b, {3}, DType::f32);
         b.l2_normalize_rows(x, y, n);
       }},
      {"gather and scatter", [](Backend& b) { rows(b, DType::i64, 2); }},
      {"gather with an i32 index", [](Backend& b) { rows(b, DType::i32, 2); }},
      {"gather into too many rows", [](Backend& b) { rows(b, DType::i64, 3); }},
      {"margin softmax f32", [](Backend& b) { softmax(b, DType::f32, DType::f32, 4); }},
      {"margin softmax f16 logits, f32 rows",
       [](Backend& b) { softmax(b, DType::f16, DType::f32, 4); }},
      {"margin softmax of no global batch",
       [](Backend& b) { softmax(b, DType::f32, DType::f32, 0); }},
      {"sgd f32",
       [](Backend& b) {
         Tensor w = t(b, {6}, DType::f32), g = t(b, {6}, DType::f32), m = t(b, {6}, DType::f32);
         b.sgd_update(w, g, m, 0.1, 0.9, 0.0, {});
       }},
      {"sgd of an f16 gradient",
       [](Backend& b) {
         Tensor w = t(b, {6}, DType::f32), g = t(b, {6}, DType::f16), m = t(b, {6}, DType::f32);
         b.sgd_update(w, g, m, 0.1, 0.9, 0.0, {});
       }},
      {"sgd rows of the wrong width",
       [](Backend& b) {
         Tensor w = t(b, {6, 3}, DType::f32), m = t(b, {6, 3}, DType::f32),
                g = t(b, {2, 4}, DType::f32), i = t(b, {2}, DType::i64);
         b.sgd_update_rows(w, m, i, g, 0.1, 0.9, 0.0, {});
       }},
      {"sgd of stored f16 and bf16 centres, dense and by rows",
       [](Backend& b) {
         for (DType stored : {DType::f16, DType::bf16}) {
           Tensor w = t(b, {6, 3}, stored), m = t(b, {6, 3}, stored), g = t(b, {6, 3}, DType::f32),
                  rows = t(b, {2, 3}, DType::f32), i = t(b, {2}, DType::i64);
           b.sgd_update(w, g, m, 0.1, 0.9, 0.0, {7, 3});
           b.sgd_update_rows(w, m, i, rows, 0.1, 0.9, 0.0, {7, 3});
         }
       }},
      {"sgd of stored f16 centres as a vector",
       [](Backend& b) {
         Tensor w = t(b, {6}, DType::f16), g = t(b, {6}, DType::f32), m = t(b, {6}, DType::f16);
         b.sgd_update(w, g, m, 0.1, 0.9, 0.0, {});
       }},
      {"sgd of stored f16 centres, an f32 momentum",
       [](Backend& b) {
         Tensor w = t(b, {6, 3}, DType::f16), m = t(b, {6, 3}, DType::f32),
                g = t(b, {2, 3}, DType::f32), i = t(b, {2}, DType::i64);
         b.sgd_update_rows(w, m, i, g, 0.1, 0.9, 0.0, {});
       }},
      {"sgd of stored bf16 centres, a bf16 gradient",
       [](Backend& b) {
         Tensor w = t(b, {6, 3}, DType::bf16), m = t(b, {6, 3}, DType::bf16),
                g = t(b, {6, 3}, DType::bf16);
         b.sgd_update(w, g, m, 0.1, 0.9, 0.0, {});
       }},
      {"adamw of stored f16 centres with bf16 moments, dense and by rows",
       [](Backend& b) {
         Tensor w = t(b, {6, 3}, DType::f16), m = t(b, {6, 3}, DType::bf16),
                v = t(b, {6, 3}, DType::bf16), g = t(b, {6, 3}, DType::f32),
                rows = t(b, {2, 3}, DType::f32), i = t(b, {2}, DType::i64);
         b.adamw_update(w, g, m, v, AdamWParams{}, {5, 0});
         b.adamw_update_rows(w, m, v, i, rows, AdamWParams{}, {5, 0});
       }},
      {"adamw of stored centres with moments of two types",
       [](Backend& b) {
         Tensor w = t(b, {6, 3}, DType::f16), m = t(b, {6, 3}, DType::bf16),
                v = t(b, {6, 3}, DType::f16), g = t(b, {6, 3}, DType::f32);
         b.adamw_update(w, g, m, v, AdamWParams{}, {});
       }},
      {"adamw f32, dense and by rows",
       [](Backend& b) {
         Tensor w = t(b, {6, 3}, DType::f32), m = t(b, {6, 3}, DType::f32),
                v = t(b, {6, 3}, DType::f32), g = t(b, {6, 3}, DType::f32),
                rows = t(b, {2, 3}, DType::f32), i = t(b, {2}, DType::i64);
         b.adamw_update(w, g, m, v, AdamWParams{}, {});
         b.adamw_update_rows(w, m, v, i, rows, AdamWParams{}, {});
       }},
      {"adamw of an f16 gradient",
       [](Backend& b) {
         Tensor w = t(b, {6}, DType::f32), g = t(b, {6}, DType::f16), m = t(b, {6}, DType::f32),
                v = t(b, {6}, DType::f32);
         b.adamw_update(w, g, m, v, AdamWParams{}, {});
       }},
      {"adamw f64 masters",
       [](Backend& b) {
         Tensor w = t(b, {6}, DType::f64), g = t(b, {6}, DType::f64), m = t(b, {6}, DType::f64),
                v = t(b, {6}, DType::f64);
         b.adamw_update(w, g, m, v, AdamWParams{}, {});
       }},
      {"adamw with a second moment of another shape",
       [](Backend& b) {
         Tensor w = t(b, {6}, DType::f32), g = t(b, {6}, DType::f32), m = t(b, {6}, DType::f32),
                v = t(b, {5}, DType::f32);
         b.adamw_update(w, g, m, v, AdamWParams{}, {});
       }},
      {"adamw rows of the wrong width",
       [](Backend& b) {
         Tensor w = t(b, {6, 3}, DType::f32), m = t(b, {6, 3}, DType::f32),
                v = t(b, {6, 3}, DType::f32), g = t(b, {2, 4}, DType::f32),
                i = t(b, {2}, DType::i64);
         b.adamw_update_rows(w, m, v, i, g, AdamWParams{}, {});
       }},
      {"exact margin f32",
       [](Backend& b) {
         Tensor cos = t(b, {4, 7}, DType::f32), label = t(b, {4}, DType::i64),
                factor = t(b, {4}, DType::f32);
         b.margin_gradient_factor(cos, label, MarginParams{}, factor);
         b.scale_target_column(cos, label, factor);
       }},
      {"exact margin with a short factor",
       [](Backend& b) {
         Tensor cos = t(b, {4, 7}, DType::f32), label = t(b, {4}, DType::i64),
                factor = t(b, {3}, DType::f32);
         b.margin_gradient_factor(cos, label, MarginParams{}, factor);
       }},
      {"sgd and adamw with a sparse gradient",
       [](Backend& b) {
         // One gradient row: the zero index is sorted and unique.
         Tensor w = t(b, {6, 3}, DType::f32), m = t(b, {6, 3}, DType::f32),
                v = t(b, {6, 3}, DType::f32), g = t(b, {1, 3}, DType::f32),
                i = t(b, {1}, DType::i64);
         b.sgd_update_sparse_grad(w, m, i, g, 0.1, 0.9, 5e-4, {});
         b.adamw_update_sparse_grad(w, m, v, i, g, AdamWParams{}, {});
       }},
      {"sparse-gradient sgd of the wrong width",
       [](Backend& b) {
         Tensor w = t(b, {6, 3}, DType::f32), m = t(b, {6, 3}, DType::f32),
                g = t(b, {1, 4}, DType::f32), i = t(b, {1}, DType::i64);
         b.sgd_update_sparse_grad(w, m, i, g, 0.1, 0.9, 5e-4, {});
       }},
      {"inter-class filter f32 and its backward",
       [](Backend& b) {
         Tensor cos = t(b, {4, 7}, DType::f32), label = t(b, {4}, DType::i64),
                keep = t(b, {4, 7}, DType::u8);
         b.interclass_filter(cos, label, 0.2, keep);
         b.interclass_filter_backward(cos, keep);
       }},
      {"inter-class filter with an f32 mask",
       [](Backend& b) {
         Tensor cos = t(b, {4, 7}, DType::f32), label = t(b, {4}, DType::i64),
                keep = t(b, {4, 7}, DType::f32);
         b.interclass_filter(cos, label, 0.2, keep);
       }},
      {"inter-class filter backward of a mask of another shape",
       [](Backend& b) {
         Tensor grad = t(b, {4, 7}, DType::f32), keep = t(b, {4, 6}, DType::u8);
         b.interclass_filter_backward(grad, keep);
       }},
      {"batched gemm of attention scores",
       [](Backend& b) { batched_scores(b, DType::f32, 42, DType::f32); }},
      {"batched gemm of f16 attention scores",
       [](Backend& b) { batched_scores(b, DType::f16, 42, DType::f16); }},
      {"batched gemm of f64 attention scores",
       [](Backend& b) { batched_scores(b, DType::f64, 42, DType::f64); }},
      {"batched gemm bf16 -> f32",
       [](Backend& b) { batched_scores(b, DType::bf16, 42, DType::f32); }},
      {"batched gemm bf16 -> bf16",
       [](Backend& b) { batched_scores(b, DType::bf16, 42, DType::bf16); }},
      {"batched gemm whose last matrix is outside c",
       [](Backend& b) { batched_scores(b, DType::f32, 41, DType::f32); }},
      {"layernorm f32", [](Backend& b) { layernorm(b, DType::f32, DType::f32, DType::f32); }},
      {"layernorm f16 with f32 parameters",
       [](Backend& b) { layernorm(b, DType::f16, DType::f32, DType::f32); }},
      {"layernorm f64", [](Backend& b) { layernorm(b, DType::f64, DType::f64, DType::f64); }},
      {"layernorm f64 with f32 statistics",
       [](Backend& b) { layernorm(b, DType::f64, DType::f32, DType::f32); }},
      {"softmax rows and ReLU6 f32", [](Backend& b) { attention_pieces(b, DType::f32, 5); }},
      {"softmax rows and ReLU6 f16", [](Backend& b) { attention_pieces(b, DType::f16, 5); }},
      {"scale samples with one factor too few",
       [](Backend& b) { attention_pieces(b, DType::f32, 4); }},
  };
}

bool refuses(Backend& backend, const OperandCase& c, std::string* message) {
  try {
    c.call(backend);
  } catch (const Error& e) {
    if (message) *message = e.what();
    return true;
  }
  return false;
}

}  // namespace pfc::test
