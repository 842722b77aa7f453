#include "backend/operand_checks.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <utility>

#include "core/error.h"

namespace pfc::operand_check {

namespace {

void defined(const Tensor& t, const char* op, const char* name) {
  PFC_CHECK(t.defined(), "{}: {} is an undefined tensor", op, name);
}

// On the backend's device.
void placed(const OperandRules& r, const Tensor& t, const char* op, const char* name) {
  defined(t, op, name);
  PFC_CHECK(t.device() == r.device, "{}: {} {} is a {} tensor; the {} backend takes {} tensors",
            op, name, t.describe(), device_kind_place(t.device()), r.backend,
            device_kind_place(r.device));
}

// On the backend's device or the host (the two ends of a copy).
void placed_or_host(const OperandRules& r, const Tensor& t, const char* op, const char* name) {
  defined(t, op, name);
  PFC_CHECK(t.device() == r.device || t.device() == DeviceKind::cpu,
            "{}: {} {} is a {} tensor; the {} backend copies between {} and host tensors", op,
            name, t.describe(), device_kind_place(t.device()), r.backend,
            device_kind_place(r.device));
}

// On the device, in one of the types the backend computes in.
void computable(const OperandRules& r, const Tensor& t, const char* op, const char* name) {
  placed(r, t, op, name);
  PFC_CHECK(r.computes_in(t.dtype()), "{}: {} is {}, the {} backend computes in {}", op, name,
            dtype_name(t.dtype()), r.backend, r.floats_text());
}

void rank_is(const Tensor& t, std::size_t rank, const char* op, const char* name) {
  PFC_CHECK(t.rank() == rank, "{}: {} has shape {}, expected rank {}", op, name,
            shape_string(t.shape()), rank);
}

void matrix(const OperandRules& r, const Tensor& t, const char* op, const char* name) {
  computable(r, t, op, name);
  rank_is(t, 2, op, name);
}

// x [rows, channels], or an NHWC map read as such: channels last.
ChannelRows channel_rows(const OperandRules& r, const Tensor& x, const char* op) {
  computable(r, x, op, "x");
  PFC_CHECK(x.rank() >= 2, "{}: x has shape {}, expected [rows, channels] or [..., channels]",
            op, shape_string(x.shape()));
  const std::int64_t channels = x.shape().back();
  return {channels == 0 ? 0 : x.numel() / channels, channels};
}

// Same place, shape and type as ref.
void like(const OperandRules& r, const Tensor& t, const Tensor& ref, const char* op,
          const char* name) {
  placed(r, t, op, name);
  check_shape(t, ref.shape(), op, name);
  check_dtype(t, ref.dtype(), op, name);
}

// Same place and type as ref, any shape.
void like_type(const OperandRules& r, const Tensor& t, const Tensor& ref, const char* op,
               const char* name) {
  placed(r, t, op, name);
  check_dtype(t, ref.dtype(), op, name);
}

// A second float operand read or written beside `ref`: any computed type where the backend
// converts per element, else ref's type.
void companion(const OperandRules& r, const Tensor& t, const Tensor& ref, const char* op,
               const char* name) {
  if (r.mixed_floats) {
    computable(r, t, op, name);
  } else {
    placed(r, t, op, name);
    check_dtype(t, ref.dtype(), op, name);
  }
}

// The type of per-row and per-channel values beside activations of type `act`.
DType statistic_type(const OperandRules& r, DType act) {
  return r.f32_statistics ? DType::f32 : act;
}

void vector_of(const OperandRules& r, const Tensor& t, std::int64_t n, DType dtype,
               const char* op, const char* name) {
  placed(r, t, op, name);
  // Compared in place: the Shape {n} that check_shape compares with and names is built only
  // for the message (an allocation on every call of every op that takes a vector).
  if (t.rank() != 1 || t.dim(0) != n) check_shape(t, {n}, op, name);
  check_dtype(t, dtype, op, name);
}

// Per-channel parameters beside activations of type `act`: f32, or act where the backend
// keeps statistics in the activations' type.
DType parameter_type(const OperandRules& r, const Tensor& p, DType act, const char* op,
                     const char* name) {
  placed(r, p, op, name);
  const DType allowed = statistic_type(r, act);
  PFC_CHECK(p.dtype() == DType::f32 || p.dtype() == allowed, "{}: {} is {}, expected f32{}", op,
            name, dtype_name(p.dtype()),
            allowed == DType::f32 ? "" : fmt::format(" or {}", dtype_name(allowed)));
  return p.dtype();
}

void index_vector(const OperandRules& r, const Tensor& index, std::int64_t n, const char* op) {
  vector_of(r, index, n, DType::i64, op, "index");
}

void margin_rows(const OperandRules& r, std::int64_t rows, const char* op) {
  PFC_CHECK(rows <= r.max_margin_rows,
            "{}: {} rows (the global batch) exceed the {} one call of the {} backend takes", op,
            rows, r.max_margin_rows, r.backend);
}

void conv_geometry(const Conv2dGeometry& g, const char* op) {
  PFC_CHECK(g.batch >= 0 && g.in_h > 0 && g.in_w > 0 && g.in_channels > 0 && g.out_channels > 0,
            "{}: bad geometry batch {} input {}x{}x{} out_channels {}", op, g.batch, g.in_h, g.in_w,
            g.in_channels, g.out_channels);
  PFC_CHECK(g.kernel > 0 && g.stride > 0 && g.pad >= 0,
            "{}: bad geometry kernel {} stride {} pad {}", op, g.kernel, g.stride, g.pad);
  PFC_CHECK(g.groups > 0 && g.in_channels % g.groups == 0 && g.out_channels % g.groups == 0,
            "{}: {} groups do not divide {} input and {} output channels", op, g.groups,
            g.in_channels, g.out_channels);
  PFC_CHECK(g.out_h() > 0 && g.out_w() > 0,
            "{}: kernel {} with pad {} does not fit the {}x{} input", op, g.kernel, g.pad, g.in_h,
            g.in_w);
}

// Whether `a` is a bf16 operand of a convolution or GEMM, which then writes f32; an error
// naming the backend where it takes no bf16 products.
bool bf16_operands(const OperandRules& r, const Tensor& a, const char* op, const char* name) {
  if (a.dtype() != DType::bf16) return false;
  PFC_CHECK(r.bf16_products, "{}: {} is bf16; the {} backend computes with {} operands", op, name,
            r.backend, r.floats_text());
  placed(r, a, op, name);
  return true;
}

// The three operands of a convolution: the activation read, the filter, the output written;
// all of one computed type, or bf16 operands writing f32.
void conv_operands(const OperandRules& r, const Conv2dGeometry& g, const char* op,
                   const Tensor& a, const char* a_name, const Shape& a_shape, const Tensor& w,
                   const char* w_name, const Shape& w_shape, const Tensor& out,
                   const char* out_name, const Shape& out_shape) {
  conv_geometry(g, op);
  const bool bf16 = bf16_operands(r, a, op, a_name);
  if (!bf16) computable(r, a, op, a_name);
  placed(r, w, op, w_name);
  placed(r, out, op, out_name);
  check_shape(a, a_shape, op, a_name);
  check_shape(w, w_shape, op, w_name);
  check_shape(out, out_shape, op, out_name);
  check_dtype(w, a.dtype(), op, w_name);
  check_dtype(out, bf16 ? DType::f32 : a.dtype(), op, out_name);
}

// Row operands of gather/scatter: same rank (at least 1), type and row shape as the table.
void rows_like_table(const OperandRules& r, const Tensor& rows_of, const Tensor& table,
                     const char* op, const char* rows_name, const char* table_name) {
  placed(r, rows_of, op, rows_name);
  placed(r, table, op, table_name);
  PFC_CHECK(rows_of.rank() >= 1 && table.rank() == rows_of.rank(),
            "{}: {} {} and {} {} must have the same rank, at least 1", op, rows_name,
            rows_of.describe(), table_name, table.describe());
  check_dtype(rows_of, table.dtype(), op, rows_name);
  Shape expected = table.shape();
  expected[0] = rows_of.dim(0);
  check_shape(rows_of, expected, op, rows_name);
}

// The BLAS takes every dimension and leading dimension as its own integer type (rules).
void gemm_dimension(const OperandRules& r, std::int64_t v, const char* what) {
  PFC_CHECK(v <= r.max_blas_dimension,
            "gemm: {} = {} exceeds {} ({}'s GEMM takes each dimension up to {})",
            what, v, r.blas_dimension_type, r.backend, r.max_blas_dimension);
}

// The u8 mask of inter-class filtering, beside the matrix it marks.
void keep_mask(const OperandRules& r, const Tensor& keep, const Tensor& matrix, const char* op) {
  placed(r, keep, op, "keep");
  check_shape(keep, matrix.shape(), op, "keep");
  check_dtype(keep, DType::u8, op, "keep");
}

// An f16 or bf16 tensor of stored values (class centres and their moments) on the device.
void stored_16bit(const OperandRules& r, const Tensor& t, const char* op, const char* name) {
  placed(r, t, op, name);
  PFC_CHECK(is_16bit_float(t.dtype()), "{}: {} is {}, expected f16 or bf16 beside 16-bit w", op,
            name, dtype_name(t.dtype()));
}

// The weights of an SGD or AdamW step and their optimiser moments (m, and v for AdamW), and its
// gradient g. Either master weights (f32; or any computed type where the backend keeps
// statistics in the activations' type) with moments like them and g a companion of w; or a
// matrix of stored 16-bit values with 16-bit moments of its shape (all of one type) and g of a
// computed type.
using Moments = std::initializer_list<std::pair<const Tensor*, const char*>>;
void optimised(const OperandRules& r, const Tensor& w, Moments moments, const Tensor& g,
               const char* op) {
  defined(w, op, "w");
  if (is_16bit_float(w.dtype())) {
    placed(r, w, op, "w");
    rank_is(w, 2, op, "w");
    for (const auto& [t, name] : moments) {
      stored_16bit(r, *t, op, name);
      check_shape(*t, w.shape(), op, name);
      check_dtype(*t, moments.begin()->first->dtype(), op, name);
    }
    computable(r, g, op, "g");
    return;
  }
  if (r.f32_statistics) {
    placed(r, w, op, "w");
    check_dtype(w, DType::f32, op, "w");
  } else {
    computable(r, w, op, "w");
  }
  for (const auto& [t, name] : moments) like(r, *t, w, op, name);
  companion(r, g, w, op, "g");
}

// An optimiser step on all of w, the gradient g of its shape.
void dense_step(const OperandRules& r, const Tensor& w, const Tensor& g, Moments moments,
                const char* op) {
  optimised(r, w, moments, g, op);
  check_shape(g, w.shape(), op, "g");
}

// An optimiser step on rows index[i] of w [rows, cols] (and of its moments), row i of g
// [count, cols] each.
void row_step(const OperandRules& r, const Tensor& w, Moments moments, const Tensor& index,
              const Tensor& g, const char* op) {
  optimised(r, w, moments, g, op);
  rank_is(w, 2, op, "w");
  rank_is(g, 2, op, "g");
  check_shape(g, {g.dim(0), w.dim(1)}, op, "g");
  index_vector(r, index, g.dim(0), op);
}

// The per-row margin primitives: a [rows, classes] matrix, its labels and one statistic per row.
void target_rows(const OperandRules& r, const Tensor& matrix_operand, const char* matrix_name,
                 const Tensor& local_label, const Tensor& factor, const char* op) {
  matrix(r, matrix_operand, op, matrix_name);
  margin_rows(r, matrix_operand.dim(0), op);
  vector_of(r, local_label, matrix_operand.dim(0), DType::i64, op, "local_label");
  vector_of(r, factor, matrix_operand.dim(0), statistic_type(r, matrix_operand.dtype()), op,
            "factor");
}

}  // namespace

void copy(const OperandRules& r, const Tensor& src, const Tensor& dst) {
  placed_or_host(r, src, "copy", "src");
  placed_or_host(r, dst, "copy", "dst");
  check_dtype(dst, src.dtype(), "copy", "dst");
  PFC_CHECK(src.numel() == dst.numel(), "copy: src {} and dst {} differ in element count",
            src.describe(), dst.describe());
}

void fill(const OperandRules& r, const Tensor& x) { placed(r, x, "fill", "x"); }

void fill_normal(const OperandRules& r, const Tensor& x) {
  placed(r, x, "fill_normal", "x");
  PFC_CHECK(x.dtype() == DType::f32 || is_16bit_float(x.dtype()),
            "fill_normal: x is {}, expected f32, f16 or bf16", dtype_name(x.dtype()));
}

void cast(const OperandRules& r, const Tensor& src, const Tensor& dst) {
  for (const auto& [t, name] :
       {std::pair<const Tensor*, const char*>{&src, "src"}, {&dst, "dst"}}) {
    placed(r, *t, "cast", name);
    const DType d = t->dtype();
    PFC_CHECK(is_16bit_float(d) || d == DType::f32 || d == DType::f64,
              "cast: {} is {}, expected f16, bf16, f32 or f64", name, dtype_name(d));
  }
  PFC_CHECK(src.numel() == dst.numel(), "cast: src {} and dst {} differ in element count",
            src.describe(), dst.describe());
}

void conv2d_forward(const OperandRules& r, const Conv2dGeometry& g, const Tensor& x,
                    const Tensor& w, const Tensor& y) {
  conv_operands(r, g, "conv2d_forward", x, "x", g.input_shape(), w, "w", g.filter_shape(), y,
                "y", g.output_shape());
}

void conv2d_forward_fused(const OperandRules& r, const Conv2dGeometry& g, const Tensor& x,
                          const Tensor& w, const ConvEpilogue& epilogue, const Tensor& y) {
  const char* op = "conv2d_forward_fused";
  DType epilogue_type = y.dtype();
  if (w.dtype() == DType::bf16) {
    // bf16 products accumulated in f32; x and y each f32 or bf16 (an inference network keeps a
    // value in bf16 when only bf16 products read it), the summed-into y f32.
    conv_geometry(g, op);
    placed(r, x, op, "x");
    placed(r, w, op, "w");
    placed(r, y, op, "y");
    for (const auto& [t, name] : {std::pair<const Tensor*, const char*>{&x, "x"}, {&y, "y"}})
      PFC_CHECK(t->dtype() == DType::f32 || t->dtype() == DType::bf16,
                "{}: {} is {}; a bf16 filter computes with f32 or bf16 {}", op, name,
                dtype_name(t->dtype()), name);
    PFC_CHECK(!epilogue.accumulate || y.dtype() == DType::f32,
              "{}: y is {}; a convolution sums into f32 y only", op, dtype_name(y.dtype()));
    check_shape(x, g.input_shape(), op, "x");
    check_shape(w, g.filter_shape(), op, "w");
    check_shape(y, g.output_shape(), op, "y");
    epilogue_type = DType::f32;
  } else {
    conv_operands(r, g, op, x, "x", g.input_shape(), w, "w", g.filter_shape(), y, "y",
                  g.output_shape());
  }
  if (epilogue.bias != nullptr)
    vector_of(r, *epilogue.bias, g.out_channels, epilogue_type, op, "bias");
  if (epilogue.prelu_slope != nullptr)
    vector_of(r, *epilogue.prelu_slope, g.out_channels, epilogue_type, op, "prelu_slope");
}

void conv2d_backward_data(const OperandRules& r, const Conv2dGeometry& g, const Tensor& dy,
                          const Tensor& w, const Tensor& dx) {
  conv_operands(r, g, "conv2d_backward_data", dy, "dy", g.output_shape(), w, "w",
                g.filter_shape(), dx, "dx", g.input_shape());
}

void conv2d_backward_filter(const OperandRules& r, const Conv2dGeometry& g, const Tensor& x,
                            const Tensor& dy, const Tensor& dw) {
  conv_operands(r, g, "conv2d_backward_filter", x, "x", g.input_shape(), dy, "dy",
                g.output_shape(), dw, "dw", g.filter_shape());
}

ChannelRows batchnorm_forward_train(const OperandRules& r, const Tensor& x, const Tensor& gamma,
                                    const Tensor& beta, const Tensor& running_mean,
                                    const Tensor& running_var, const Tensor& y,
                                    const Tensor& saved_mean, const Tensor& saved_invstd) {
  const char* op = "batchnorm_forward_train";
  const ChannelRows d = channel_rows(r, x, op);
  const auto [rows, channels] = d;
  PFC_CHECK(rows > 1, "{}: x {} has {} rows; the unbiased variance needs at least 2", op,
            x.describe(), rows);
  const DType p = parameter_type(r, gamma, x.dtype(), op, "gamma");
  const std::pair<const Tensor*, const char*> params[] = {
      {&gamma, "gamma"},           {&beta, "beta"},
      {&running_mean, "running_mean"}, {&running_var, "running_var"},
      {&saved_mean, "saved_mean"}, {&saved_invstd, "saved_invstd"}};
  for (const auto& [t, name] : params) vector_of(r, *t, channels, p, op, name);
  like(r, y, x, op, "y");
  return d;
}

// A normalisation by given statistics: x [rows, channels], four per-channel vectors of the
// parameter type, y like x. It uses no batch statistics, so any row count will do, none
// included.
ChannelRows normalised_by(const OperandRules& r, const Tensor& x, const Tensor& gamma,
                          const Tensor& beta, const Tensor& mean, const char* mean_name,
                          const Tensor& spread, const char* spread_name, const Tensor& y,
                          const char* op) {
  const ChannelRows d = channel_rows(r, x, op);
  const DType p = parameter_type(r, gamma, x.dtype(), op, "gamma");
  const std::pair<const Tensor*, const char*> params[] = {
      {&gamma, "gamma"}, {&beta, "beta"}, {&mean, mean_name}, {&spread, spread_name}};
  for (const auto& [t, name] : params) vector_of(r, *t, d.channels, p, op, name);
  like(r, y, x, op, "y");
  return d;
}

ChannelRows batchnorm_forward_inference(const OperandRules& r, const Tensor& x,
                                        const Tensor& gamma, const Tensor& beta,
                                        const Tensor& running_mean, const Tensor& running_var,
                                        const Tensor& y) {
  return normalised_by(r, x, gamma, beta, running_mean, "running_mean", running_var,
                       "running_var", y, "batchnorm_forward_inference");
}

ChannelRows batchnorm_forward_saved(const OperandRules& r, const Tensor& x, const Tensor& gamma,
                                    const Tensor& beta, const Tensor& saved_mean,
                                    const Tensor& saved_invstd, const Tensor& y) {
  return normalised_by(r, x, gamma, beta, saved_mean, "saved_mean", saved_invstd,
                       "saved_invstd", y, "batchnorm_forward_saved");
}

ChannelRows batchnorm_backward(const OperandRules& r, const Tensor& dy, const Tensor& x,
                               const Tensor& gamma, const Tensor& saved_mean,
                               const Tensor& saved_invstd, const Tensor& dx, const Tensor& dgamma,
                               const Tensor& dbeta) {
  const char* op = "batchnorm_backward";
  const ChannelRows d = channel_rows(r, x, op);
  PFC_CHECK(d.rows > 0, "{}: x {} has no rows", op, x.describe());
  like(r, dy, x, op, "dy");
  like(r, dx, x, op, "dx");
  const DType p = parameter_type(r, gamma, x.dtype(), op, "gamma");
  const std::pair<const Tensor*, const char*> params[] = {{&gamma, "gamma"},
                                                          {&saved_mean, "saved_mean"},
                                                          {&saved_invstd, "saved_invstd"},
                                                          {&dgamma, "dgamma"},
                                                          {&dbeta, "dbeta"}};
  for (const auto& [t, name] : params) vector_of(r, *t, d.channels, p, op, name);
  return d;
}

ChannelRows prelu_forward(const OperandRules& r, const Tensor& x, const Tensor& slope,
                          const Tensor& y) {
  const char* op = "prelu_forward";
  const ChannelRows d = channel_rows(r, x, op);
  vector_of(r, slope, d.channels, parameter_type(r, slope, x.dtype(), op, "slope"), op, "slope");
  like(r, y, x, op, "y");
  return d;
}

ChannelRows prelu_backward(const OperandRules& r, const Tensor& dy, const Tensor& x,
                           const Tensor& slope, const Tensor& dx, const Tensor& dslope) {
  const char* op = "prelu_backward";
  const ChannelRows d = channel_rows(r, x, op);
  like(r, dy, x, op, "dy");
  like(r, dx, x, op, "dx");
  const DType p = parameter_type(r, slope, x.dtype(), op, "slope");
  vector_of(r, slope, d.channels, p, op, "slope");
  vector_of(r, dslope, d.channels, p, op, "dslope");
  return d;
}

void add(const OperandRules& r, const Tensor& a, const Tensor& b, const Tensor& y) {
  computable(r, a, "add", "a");
  like(r, b, a, "add", "b");
  like(r, y, a, "add", "y");
}

void axpy(const OperandRules& r, const Tensor& x, const Tensor& y) {
  computable(r, x, "axpy", "x");
  companion(r, y, x, "axpy", "y");
  check_shape(y, x.shape(), "axpy", "y");
}

void scale(const OperandRules& r, const Tensor& x) { computable(r, x, "scale", "x"); }

void sum_of_squares(const OperandRules& r, const Tensor& x) {
  computable(r, x, "sum_of_squares", "x");
}

void all_finite(const OperandRules& r, const Tensor& x) { computable(r, x, "all_finite", "x"); }

GemmDims gemm(const OperandRules& r, bool transpose_a, bool transpose_b, const Tensor& a,
              const Tensor& b, const Tensor& c) {
  const char* op = "gemm";
  placed(r, a, op, "a");
  placed(r, b, op, "b");
  placed(r, c, op, "c");
  rank_is(a, 2, op, "a");
  rank_is(b, 2, op, "b");
  check_dtype(b, a.dtype(), op, "b");
  if (a.dtype() == DType::f16) {
    // The tensor-core contract: f16 products accumulated in f32, written as f32 (or f16).
    if (!(r.f16_gemm_output && c.dtype() == DType::f16))
      check_dtype(c, DType::f32, op, "c (with f16 a and b)");
  } else if (bf16_operands(r, a, op, "a")) {
    check_dtype(c, DType::f32, op, "c (with bf16 a and b)");
  } else {
    computable(r, a, op, "a");
    check_dtype(c, a.dtype(), op, "c");
  }
  GemmDims d;
  d.m = transpose_a ? a.dim(1) : a.dim(0);
  d.k = transpose_a ? a.dim(0) : a.dim(1);
  const std::int64_t kb = transpose_b ? b.dim(1) : b.dim(0);
  d.n = transpose_b ? b.dim(0) : b.dim(1);
  PFC_CHECK(d.k == kb,
            "gemm: inner dimensions differ: op(a) of {} is [{}, {}], op(b) of {} is [{}, {}]",
            a.describe(), d.m, d.k, b.describe(), kb, d.n);
  check_shape(c, {d.m, d.n}, op, "c");
  for (const auto& [v, what] : {std::pair<std::int64_t, const char*>{d.m, "m"}, {d.n, "n"},
                                {d.k, "k"}, {a.dim(1), "lda"}, {b.dim(1), "ldb"}})
    gemm_dimension(r, v, what);
  return d;
}

ChannelRows add_row_vector(const OperandRules& r, const Tensor& x, const Tensor& bias) {
  const ChannelRows d = channel_rows(r, x, "add_row_vector");
  companion(r, bias, x, "add_row_vector", "bias");
  check_shape(bias, {d.channels}, "add_row_vector", "bias");
  return d;
}

ChannelRows sum_rows(const OperandRules& r, const Tensor& x, const Tensor& out) {
  const ChannelRows d = channel_rows(r, x, "sum_rows");
  companion(r, out, x, "sum_rows", "out");
  check_shape(out, {d.channels}, "sum_rows", "out");
  return d;
}

// x is computed-type rows, or stored 16-bit rows (class centres) read into y's computed type.
namespace {

// Both backends' batched GEMMs (cblas per matrix, cublasGemmStridedBatchedEx) take int
// dimensions, leading dimensions and batch counts, whatever the backend's plain GEMM takes.
void batched_gemm_int(std::int64_t v, const char* what) {
  PFC_CHECK(v <= std::numeric_limits<int>::max(), "batched_gemm: {} = {} exceeds the BLAS's int",
            what, v);
}

// The stored extent of one operand of a batched GEMM: every matrix of the batch inside the
// tensor, with rows at least as long as the matrix's.
void matrix_batch(const BatchedGemmGeometry& g, const MatrixBatchLayout& l, const Tensor& t,
                  std::int64_t rows, std::int64_t cols, const char* name) {
  PFC_CHECK(l.offset >= 0 && l.outer_stride >= 0 && l.inner_stride >= 0,
            "batched_gemm: {} has a negative offset or stride", name);
  PFC_CHECK(l.ld >= std::max<std::int64_t>(cols, 1),
            "batched_gemm: {}'s leading dimension {} is below its {} columns", name, l.ld, cols);
  batched_gemm_int(l.ld, "a leading dimension");
  if (rows == 0 || cols == 0) return;
  const std::int64_t last = l.offset + (g.outer - 1) * l.outer_stride +
                            (g.inner - 1) * l.inner_stride + (rows - 1) * l.ld + cols - 1;
  PFC_CHECK(last < t.numel(),
            "batched_gemm: {} {} holds {} elements; its last matrix ends at element {}", name,
            t.describe(), t.numel(), last);
}

// The rows of a per-row primitive, its per-row values of the rows' statistic type.
void row_values(const OperandRules& r, const Tensor& t, std::int64_t rows, DType act,
                const char* op, const char* name) {
  vector_of(r, t, rows, statistic_type(r, act), op, name);
}

}  // namespace

GemmDims batched_gemm(const OperandRules& r, const BatchedGemmGeometry& g, const Tensor& a,
                      const Tensor& b, const Tensor& c) {
  const char* op = "batched_gemm";
  if (bf16_operands(r, a, op, "a")) {
    // bf16 products accumulated in f32, as gemm's.
    placed(r, b, op, "b");
    placed(r, c, op, "c");
    check_dtype(b, DType::bf16, op, "b");
    check_dtype(c, DType::f32, op, "c (with bf16 a and b)");
  } else {
    computable(r, a, op, "a");
    like_type(r, b, a, op, "b");
    like_type(r, c, a, op, "c");
  }
  PFC_CHECK(g.outer >= 1 && g.inner >= 1 && g.m >= 0 && g.n >= 0 && g.k >= 0,
            "batched_gemm: bad geometry: {} x {} matrices of m {} n {} k {}", g.outer, g.inner,
            g.m, g.n, g.k);
  for (const auto& [v, what] : {std::pair<std::int64_t, const char*>{g.m, "m"}, {g.n, "n"},
                                {g.k, "k"}, {g.outer * g.inner, "the batch"}})
    batched_gemm_int(v, what);
  matrix_batch(g, g.a, a, g.transpose_a ? g.k : g.m, g.transpose_a ? g.m : g.k, "a");
  matrix_batch(g, g.b, b, g.transpose_b ? g.n : g.k, g.transpose_b ? g.k : g.n, "b");
  matrix_batch(g, g.c, c, g.m, g.n, "c");
  return {g.m, g.n, g.k};
}

ChannelRows layernorm_forward(const OperandRules& r, const Tensor& x, const Tensor& gamma,
                              const Tensor& beta, const Tensor& y, const Tensor& saved_mean,
                              const Tensor& saved_invstd) {
  const char* op = "layernorm_forward";
  const ChannelRows d = channel_rows(r, x, op);
  const DType p = parameter_type(r, gamma, x.dtype(), op, "gamma");
  vector_of(r, gamma, d.channels, p, op, "gamma");
  vector_of(r, beta, d.channels, p, op, "beta");
  if (bf16_operands(r, y, op, "y")) {
    // The operand of a bf16 product, normalised from f32.
    check_dtype(x, DType::f32, op, "x (with bf16 y)");
    check_shape(y, x.shape(), op, "y");
  } else {
    like(r, y, x, op, "y");
  }
  row_values(r, saved_mean, d.rows, x.dtype(), op, "saved_mean");
  row_values(r, saved_invstd, d.rows, x.dtype(), op, "saved_invstd");
  return d;
}

ChannelRows layernorm_backward(const OperandRules& r, const Tensor& dy, const Tensor& x,
                               const Tensor& gamma, const Tensor& saved_mean,
                               const Tensor& saved_invstd, const Tensor& dx, const Tensor& dgamma,
                               const Tensor& dbeta) {
  const char* op = "layernorm_backward";
  const ChannelRows d = channel_rows(r, x, op);
  like(r, dy, x, op, "dy");
  like(r, dx, x, op, "dx");
  const DType p = parameter_type(r, gamma, x.dtype(), op, "gamma");
  vector_of(r, gamma, d.channels, p, op, "gamma");
  vector_of(r, dgamma, d.channels, p, op, "dgamma");
  vector_of(r, dbeta, d.channels, p, op, "dbeta");
  row_values(r, saved_mean, d.rows, x.dtype(), op, "saved_mean");
  row_values(r, saved_invstd, d.rows, x.dtype(), op, "saved_invstd");
  return d;
}

ChannelRows softmax_rows_forward(const OperandRules& r, const Tensor& x, const Tensor& y) {
  const ChannelRows d = channel_rows(r, x, "softmax_rows_forward");
  like(r, y, x, "softmax_rows_forward", "y");
  return d;
}

ChannelRows softmax_rows_backward(const OperandRules& r, const Tensor& dy, const Tensor& y,
                                  const Tensor& dx) {
  const char* op = "softmax_rows_backward";
  computable(r, y, op, "y");
  const ChannelRows d = channel_rows(r, y, op);
  like(r, dy, y, op, "dy");
  like(r, dx, y, op, "dx");
  return d;
}

void relu6_forward(const OperandRules& r, const Tensor& x, const Tensor& y) {
  computable(r, x, "relu6_forward", "x");
  like(r, y, x, "relu6_forward", "y");
}

void relu6_backward(const OperandRules& r, const Tensor& dy, const Tensor& y, const Tensor& dx) {
  computable(r, y, "relu6_backward", "y");
  like(r, dy, y, "relu6_backward", "dy");
  like(r, dx, y, "relu6_backward", "dx");
}

ChannelRows scale_samples(const OperandRules& r, const Tensor& x, const Tensor& factor,
                          const Tensor& y) {
  const char* op = "scale_samples";
  computable(r, x, op, "x");
  PFC_CHECK(x.rank() >= 1, "{}: x has shape {}, expected [samples, ...]", op,
            shape_string(x.shape()));
  like(r, y, x, op, "y");
  const std::int64_t samples = x.dim(0);
  vector_of(r, factor, samples, parameter_type(r, factor, x.dtype(), op, "factor"), op,
            "factor");
  return {samples, samples == 0 ? 0 : x.numel() / samples};
}

void l2_normalize_rows(const OperandRules& r, const Tensor& x, const Tensor& y,
                       const Tensor& norms) {
  const char* op = "l2_normalize_rows";
  DType computed = x.dtype();
  if (x.defined() && is_16bit_float(x.dtype()) && !r.computes_in(x.dtype())) {
    placed(r, x, op, "x");
    rank_is(x, 2, op, "x");
    computable(r, y, op, "y");
    computed = y.dtype();
  } else {
    matrix(r, x, op, "x");
    companion(r, y, x, op, "y");
  }
  check_shape(y, x.shape(), op, "y");
  vector_of(r, norms, x.dim(0), statistic_type(r, computed), op, "norms");
}

void l2_normalize_rows_backward(const OperandRules& r, const Tensor& dy, const Tensor& y,
                                const Tensor& norms, const Tensor& dx) {
  const char* op = "l2_normalize_rows_backward";
  matrix(r, y, op, "y");
  for (const auto& [t, name] : {std::pair<const Tensor*, const char*>{&dy, "dy"}, {&dx, "dx"}}) {
    companion(r, *t, y, op, name);
    check_shape(*t, y.shape(), op, name);
  }
  vector_of(r, norms, y.dim(0), statistic_type(r, y.dtype()), op, "norms");
}

void gather_rows(const OperandRules& r, const Tensor& src, const Tensor& index,
                 const Tensor& dst) {
  rows_like_table(r, dst, src, "gather_rows", "dst", "src");
  index_vector(r, index, dst.dim(0), "gather_rows");
}

void scatter_rows(const OperandRules& r, const Tensor& src, const Tensor& index,
                  const Tensor& dst) {
  rows_like_table(r, src, dst, "scatter_rows", "src", "dst");
  index_vector(r, index, src.dim(0), "scatter_rows");
}

void margin_logits(const OperandRules& r, const Tensor& cos, const Tensor& local_label,
                   const Tensor& row_max) {
  const char* op = "margin_logits";
  matrix(r, cos, op, "cos");
  margin_rows(r, cos.dim(0), op);
  vector_of(r, local_label, cos.dim(0), DType::i64, op, "local_label");
  vector_of(r, row_max, cos.dim(0), statistic_type(r, cos.dtype()), op, "row_max");
}

void exp_and_row_sum(const OperandRules& r, const Tensor& logits, const Tensor& global_max,
                     const Tensor& row_sum) {
  const char* op = "exp_and_row_sum";
  matrix(r, logits, op, "logits");
  margin_rows(r, logits.dim(0), op);
  const DType s = statistic_type(r, logits.dtype());
  vector_of(r, global_max, logits.dim(0), s, op, "global_max");
  vector_of(r, row_sum, logits.dim(0), s, op, "row_sum");
}

void softmax_grad(const OperandRules& r, const Tensor& exp_logits, const Tensor& global_sum,
                  const Tensor& local_label, std::int64_t global_batch,
                  const Tensor& target_prob) {
  const char* op = "softmax_grad";
  matrix(r, exp_logits, op, "exp_logits");
  PFC_CHECK(global_batch > 0, "{}: global_batch is {}, expected > 0", op, global_batch);
  const std::int64_t rows = exp_logits.dim(0);
  margin_rows(r, rows, op);
  const DType s = statistic_type(r, exp_logits.dtype());
  vector_of(r, global_sum, rows, s, op, "global_sum");
  vector_of(r, local_label, rows, DType::i64, op, "local_label");
  vector_of(r, target_prob, rows, s, op, "target_prob");
}

void interclass_filter(const OperandRules& r, const Tensor& cos, const Tensor& local_label,
                       const Tensor& keep) {
  const char* op = "interclass_filter";
  matrix(r, cos, op, "cos");
  margin_rows(r, cos.dim(0), op);
  vector_of(r, local_label, cos.dim(0), DType::i64, op, "local_label");
  keep_mask(r, keep, cos, op);
}

void interclass_filter_backward(const OperandRules& r, const Tensor& grad, const Tensor& keep) {
  const char* op = "interclass_filter_backward";
  matrix(r, grad, op, "grad");
  keep_mask(r, keep, grad, op);
}

void margin_gradient_factor(const OperandRules& r, const Tensor& cos, const Tensor& local_label,
                            const Tensor& factor) {
  target_rows(r, cos, "cos", local_label, factor, "margin_gradient_factor");
}

void scale_target_column(const OperandRules& r, const Tensor& grad, const Tensor& local_label,
                         const Tensor& factor) {
  target_rows(r, grad, "grad", local_label, factor, "scale_target_column");
}

void sgd_update(const OperandRules& r, const Tensor& w, const Tensor& g, const Tensor& m) {
  dense_step(r, w, g, {{&m, "m"}}, "sgd_update");
}

void sgd_update_rows(const OperandRules& r, const Tensor& w, const Tensor& m, const Tensor& index,
                     const Tensor& g) {
  row_step(r, w, {{&m, "m"}}, index, g, "sgd_update_rows");
}

void adamw_update(const OperandRules& r, const Tensor& w, const Tensor& g, const Tensor& m,
                  const Tensor& v) {
  dense_step(r, w, g, {{&m, "m"}, {&v, "v"}}, "adamw_update");
}

void adamw_update_rows(const OperandRules& r, const Tensor& w, const Tensor& m, const Tensor& v,
                       const Tensor& index, const Tensor& g) {
  row_step(r, w, {{&m, "m"}, {&v, "v"}}, index, g, "adamw_update_rows");
}

void sgd_update_sparse_grad(const OperandRules& r, const Tensor& w, const Tensor& m,
                            const Tensor& index, const Tensor& g) {
  row_step(r, w, {{&m, "m"}}, index, g, "sgd_update_sparse_grad");
}

void adamw_update_sparse_grad(const OperandRules& r, const Tensor& w, const Tensor& m,
                              const Tensor& v, const Tensor& index, const Tensor& g) {
  row_step(r, w, {{&m, "m"}, {&v, "v"}}, index, g, "adamw_update_sparse_grad");
}

}  // namespace pfc::operand_check
