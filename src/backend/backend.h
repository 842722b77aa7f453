// The primitives the model, PartialFC and the trainer are written against. Two
// implementations: backend/cpu (plain loops and OpenBLAS; f32, and f64 for an f64 run and the
// gradient checks) and backend/cuda (cuDNN, cuBLAS and our kernels; f32 and f16 activations);
// and backend/meta, which plans a run of either without computing (tensors without storage,
// arithmetic counted).
//
// Conventions, shared by both:
//  - row-major tensors; activations NHWC, viewed as [rows, channels] where a primitive is
//    per channel (batch-norm, PReLU); convolution filters OHWI ([out, kh, kw, in]);
//  - outputs are overwritten, never accumulated into, unless the name says `accumulate`;
//  - reductions accumulate in at least fp32;
//  - every primitive checks the shapes and dtypes it is given and names the offending
//    operand in its error, through backend/operand_checks.h (one function per primitive that
//    every backend calls, with its rules). A new primitive: its check there, then each backend.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backend/allocation_policy.h"
#include "backend/backend_kind.h"
#include "core/tensor.h"

namespace pfc {

// A square convolution. With `groups` > 1 the channels split into that many groups of
// in_channels / groups inputs and out_channels / groups outputs each, every output channel
// seeing only its own group's inputs (PyTorch's Conv2d `groups`); groups = in_channels =
// out_channels is a depthwise convolution. The filter is [out, kernel, kernel, in / groups].
struct Conv2dGeometry {
  std::int64_t batch = 0, in_h = 0, in_w = 0, in_channels = 0;
  std::int64_t out_channels = 0, kernel = 3, stride = 1, pad = 1;
  std::int64_t groups = 1;

  std::int64_t out_h() const { return (in_h + 2 * pad - kernel) / stride + 1; }
  std::int64_t out_w() const { return (in_w + 2 * pad - kernel) / stride + 1; }
  std::int64_t in_per_group() const { return in_channels / groups; }
  std::int64_t out_per_group() const { return out_channels / groups; }
  Shape input_shape() const { return {batch, in_h, in_w, in_channels}; }
  Shape output_shape() const { return {batch, out_h(), out_w(), out_channels}; }
  Shape filter_shape() const { return {out_channels, kernel, kernel, in_per_group()}; }
};

// Where the matrices of one operand of a batched GEMM lie in its tensor: matrix (i, j) of the
// batch starts at element offset + i * outer_stride + j * inner_stride, its rows ld elements
// apart.
struct MatrixBatchLayout {
  std::int64_t offset = 0, ld = 0, outer_stride = 0, inner_stride = 0;
};

// outer x inner products c_ij = alpha * op(a_ij) * op(b_ij) + beta * c_ij, c_ij [m, n],
// op(a_ij) [m, k]. Two batch levels, so that attention reads each (sample, head) matrix where
// the token rows interleave the heads, and writes its output straight into the token layout.
struct BatchedGemmGeometry {
  std::int64_t outer = 1, inner = 1, m = 0, n = 0, k = 0;
  bool transpose_a = false, transpose_b = false;
  MatrixBatchLayout a, b, c;
};

// What follows a convolution in a network prepared for inference (model/inference_network.h),
// in this order: + bias[c] (the folded batch-norm's shift), PReLU with slope[c], ReLU6, + the
// residual that y holds on entry (iresnet's block sum, MobileFaceNet's shortcut).
struct ConvEpilogue {
  const Tensor* bias = nullptr;         // [out_channels], of y's type
  const Tensor* prelu_slope = nullptr;  // [out_channels], of y's type
  bool relu6 = false;                   // clamped to [0, 6]: a ViT MLP's activation
  bool accumulate = false;              // y += the result: y holds the residual on entry
};

// The combined margin of arcface_torch's CombinedMarginLoss: the target logit becomes
// s * (cos(m1 * theta + m2) - m3); m1 = 1, m3 = 0 is ArcFace, m1 = 1, m2 = 0 is CosFace.
struct MarginParams {
  double m1 = 1.0, m2 = 0.5, m3 = 0.0;
  double scale = 64.0;
};

// torch.optim.AdamW's constants for one update: decoupled weight decay, bias-corrected
// moments. `step` numbers the update, from 1 (the bias correction's t).
struct AdamWParams {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 1e-2;
  std::int64_t step = 1;
};

// How an optimiser update stores the values it keeps in 16 bits (class centres and their
// moments under classifier_storage = "f16" | "bf16"): rounded stochastically
// (core/float16_bits.h), element (r, c) of a [rows, cols] tensor drawing the bits of global
// element (first_row + r) * cols + c in the update's stream of that tensor
// (core/stochastic_rounding.h: the weights, the first and the second moment each have their
// own). The draws depend on the key and the global row only, never on the rank that holds
// the row. f32 and f64 values are stored as computed and ignore it.
struct StochasticRounding {
  std::uint64_t key = 0;
  std::int64_t first_row = 0;
};

// The factors of one AdamW update, computed in f64 by both backends alike: the decay
// 1 - lr * wd, the step size lr / (1 - beta1^t) and sqrt(1 - beta2^t). Throws pfc::Error
// naming `op` when step < 1 or a beta is outside [0, 1).
struct AdamWFactors {
  double decay = 1.0, step_size = 0.0, bias2_sqrt = 1.0;
};
AdamWFactors adamw_factors(const AdamWParams& p, const char* op);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceKind device() const = 0;
  virtual std::string name() const = 0;
  virtual Allocator& allocator() = 0;
  // Waits for all queued work (a no-op on the CPU).
  virtual void synchronize() = 0;
  // What the algorithm allocates on this backend (activation types, ledger rounding); the
  // meta backend answers as the backend it plans for.
  virtual const AllocationPolicy& allocation_policy() const = 0;

  Tensor empty(const Shape& shape, DType dtype, MemoryPurpose purpose);
  Tensor zeros(const Shape& shape, DType dtype, MemoryPurpose purpose);
  // A host copy of x, same shape and dtype.
  Tensor to_host(const Tensor& x);
  // dst = src converted to dst's element type (f16, f32, f64), same element count; either
  // may be a host tensor. A plain copy when the types agree; a cast when both are on the
  // device; otherwise converted on the host side of the transfer (core/host_cast.h).
  void copy_cast(const Tensor& src, Tensor& dst);

  // Device memory in use that is not pfc's own allocations: the CUDA context, the libraries'
  // handles and loaded kernels, NCCL's buffers (what nvidia-smi shows beyond our tensors).
  // 0 on the CPU.
  virtual std::int64_t device_overhead_bytes() { return 0; }

  // The caller only runs the model forward from now on (an inference command): a backend may
  // keep filters in its kernels' own layouts between calls, as long as their values stay
  // unchanged (Tensor::content_version), in memory counted as `weights`. Nothing on cuda.
  virtual void keep_prepared_filters() {}

  // Host memory for buffers the device reads every step (the data pipeline's batches):
  // pinned on cuda, where it copies faster and without blocking; plain memory on the CPU.
  virtual Allocator& staging_allocator() { return host_allocator(); }

  // ---- data movement ----------------------------------------------------------------
  // dst = src; same dtype and element count; either may be a host tensor. A copy to the host
  // returns once the host tensor holds the values. A copy from the host may still be in
  // flight when it returns: the source may be reused at once if it is plain host memory, but
  // staging_allocator() memory must stay untouched until the next synchronize().
  virtual void copy(const Tensor& src, Tensor& dst) = 0;
  virtual void fill(Tensor& x, double value) = 0;
  // x [i] = normal_value(key, first_index + i, stddev) (core/counter_rng.h): random initial
  // values drawn where they live, in any split, identical on every backend. x is f32, or f16
  // or bf16 (stored class centres), the f32 value rounded to nearest even.
  virtual void fill_normal(Tensor& x, std::uint64_t key, std::uint64_t first_index,
                           double stddev) = 0;
  // dst = src converted between f16, bf16, f32 and f64 (same element count), rounded to
  // nearest even.
  virtual void cast(const Tensor& src, Tensor& dst) = 0;

  // ---- convolution (NHWC activations, OHWI filters, no bias, any group count) -----
  virtual void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                              Tensor& y) = 0;
  virtual void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                                    Tensor& dx) = 0;
  virtual void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x,
                                      const Tensor& dy, Tensor& dw) = 0;

  // y = epilogue(conv(x, w)) for an inference network. x and y are f32 (f64 in an f64 run);
  // w is of their type, or bf16: then x too is rounded to bf16 (or is bf16 already), the
  // products accumulate in f32, and y may be bf16, rounded once after the epilogue (unless it
  // is summed into). Here, the reference: conv2d_forward, add_row_vector, prelu_forward and
  // add, one pass each (a bf16 w cast to f32 first). The CPU backend runs it as one oneDNN
  // convolution with post-ops.
  virtual void conv2d_forward_fused(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                    const ConvEpilogue& epilogue, Tensor& y);
  // Whether conv2d_forward_fused is one pass over memory here, so an inference network is
  // worth preparing with its batch-norms folded into the convolutions.
  virtual bool fuses_inference() const { return false; }

  // ---- batch-norm over x [rows, channels] ----------------------------------------------
  // Training mode: normalises with the biased batch variance, updates running_var with the
  // unbiased one: running = (1 - momentum) * running + momentum * batch.
  // saved_mean/saved_invstd [channels] are kept for backward. Parameters and statistics are
  // f32 whatever x's dtype, or f64 with f64 x (an f64 run, on the CPU).
  virtual void batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                       Tensor& running_mean, Tensor& running_var,
                                       double momentum, double eps, Tensor& y,
                                       Tensor& saved_mean, Tensor& saved_invstd) = 0;
  virtual void batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                  const Tensor& saved_mean, const Tensor& saved_invstd,
                                  Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;
  // Batch-norm in inference mode (PyTorch's model.eval()): the running statistics stand in
  // for the batch's, y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta. Nothing
  // is kept or updated; any number of rows, one included.
  virtual void batchnorm_forward_inference(const Tensor& x, const Tensor& gamma,
                                           const Tensor& beta, const Tensor& running_mean,
                                           const Tensor& running_var, double eps,
                                           Tensor& y) = 0;
  // y = (x - saved_mean) * saved_invstd * gamma + beta: a training forward's output again, from
  // the statistics it saved, for a backward that recomputes an activation instead of keeping
  // it. Bit for bit that forward's y on cuda and in an f64 run; in an f32 CPU run within an f32
  // rounding of it (that forward normalises with its statistics before they are rounded).
  virtual void batchnorm_forward_saved(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                       const Tensor& saved_mean, const Tensor& saved_invstd,
                                       Tensor& y) = 0;

  // ---- PReLU over x [rows, channels], one slope per channel ---------------------------
  virtual void prelu_forward(const Tensor& x, const Tensor& slope, Tensor& y) = 0;
  virtual void prelu_backward(const Tensor& dy, const Tensor& x, const Tensor& slope,
                              Tensor& dx, Tensor& dslope) = 0;

  // ---- elementwise and reductions ------------------------------------------------------
  virtual void add(const Tensor& a, const Tensor& b, Tensor& y) = 0;  // y = a + b
  virtual void axpy(double alpha, const Tensor& x, Tensor& y) = 0;   // y += alpha * x
  virtual void scale(Tensor& x, double alpha) = 0;                  // x *= alpha
  // Sum of squares of all elements, accumulated in f64 on the CPU, f32 per block on CUDA.
  virtual double sum_of_squares(const Tensor& x) = 0;
  // False when any element is inf or NaN (the loss scaler's overflow check).
  virtual bool all_finite(const Tensor& x) = 0;

  // ---- dense algebra (row-major) -------------------------------------------------------
  // c = alpha * op(a) * op(b) + beta * c, op(m) = m or its transpose. a, b and c share one
  // type, or a and b are f16 and c is f32: the tensor-core contract (each product exact,
  // accumulated in f32), which the fp16 classifier uses.
  virtual void gemm(bool transpose_a, bool transpose_b, double alpha, const Tensor& a,
                    const Tensor& b, double beta, Tensor& c) = 0;
  // x[r, :] += bias for every row r.
  virtual void add_row_vector(Tensor& x, const Tensor& bias) = 0;
  // out[c] = sum over rows of x[r, c] (bias gradients).
  virtual void sum_rows(const Tensor& x, Tensor& out) = 0;

  // c_ij = alpha * op(a_ij) * op(b_ij) + beta * c_ij for every matrix of the batch (g); a, b
  // and c of one type (f32 or f64 on the cpu; f16 or f32 on cuda, accumulated in f32). The
  // matrices of c must not overlap.
  virtual void batched_gemm(const BatchedGemmGeometry& g, double alpha, const Tensor& a,
                            const Tensor& b, double beta, Tensor& c) = 0;

  // ---- transformer pieces (the Vision Transformers) -------------------------------------
  // torch.nn.LayerNorm over the last dimension of x [rows, width] (or [..., width]):
  // y = (x - mean) * invstd * gamma + beta with the biased variance, invstd = 1 / sqrt(var +
  // eps). saved_mean/saved_invstd [rows] are kept for backward (per-row values: f32 on cuda,
  // x's type on the cpu); gamma and beta [width] are f32, or f64 with f64 x. y is of x's type,
  // or bf16 beside f32 x where the backend takes bf16 products, for one to read (each value
  // rounded once).
  virtual void layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 double eps, Tensor& y, Tensor& saved_mean,
                                 Tensor& saved_invstd) = 0;
  // dx, and dgamma = sum over rows of dy * xhat, dbeta = sum over rows of dy.
  virtual void layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                  const Tensor& saved_mean, const Tensor& saved_invstd,
                                  Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;
  // y = softmax over the last dimension of x, exp(x - row max) / row sum, the sum in at least
  // f32. y may be x.
  virtual void softmax_rows_forward(const Tensor& x, Tensor& y) = 0;
  // dx = y * (dy - sum over the row of dy * y), y the forward's output. dx may be dy.
  virtual void softmax_rows_backward(const Tensor& dy, const Tensor& y, Tensor& dx) = 0;
  // y = min(max(x, 0), 6) (torch.nn.ReLU6). y may be x.
  virtual void relu6_forward(const Tensor& x, Tensor& y) = 0;
  // dx = dy where 0 < y < 6, else 0, y the forward's output: torch's hardtanh backward, which
  // asks the same of the input (0 < x < 6 exactly where 0 < y < 6), so the forward may run in
  // place. dx may be dy.
  virtual void relu6_backward(const Tensor& dy, const Tensor& y, Tensor& dx) = 0;
  // y[s, ...] = factor[s] * x[s, ...] for every sample s of dimension 0: DropPath's kept
  // samples divided by the keep probability, dropped ones zeroed. factor [samples] is f32, or
  // x's type on the cpu. y may be x.
  virtual void scale_samples(const Tensor& x, const Tensor& factor, Tensor& y) = 0;

  // ---- PartialFC pieces ----------------------------------------------------------------
  // y = x / max(||x||, 1e-12) per row; norms [rows] keeps ||x|| for backward. x may also hold
  // stored values (f16 or bf16 class centres), read into y's type: norms and y are then
  // exactly those of x converted to y's type first.
  virtual void l2_normalize_rows(const Tensor& x, Tensor& y, Tensor& norms) = 0;
  // dx may be dy itself (in place): each row's dot product is taken before its row is written.
  virtual void l2_normalize_rows_backward(const Tensor& dy, const Tensor& y, const Tensor& norms,
                                          Tensor& dx) = 0;
  // dst[i, :] = src[index[i], :]            (index i64; any element type, moved as it is)
  // PartialFC's sampled centres, and the tokens a Vision Transformer keeps when it masks (x
  // [batch * tokens, width], index sample * tokens + token).
  virtual void gather_rows(const Tensor& src, const Tensor& index, Tensor& dst) = 0;
  // dst[index[i], :] = src[i, :]            (index unique)
  virtual void scatter_rows(const Tensor& src, const Tensor& index, Tensor& dst) = 0;

  // In place on cos [batch, classes]: clamp to [-1, 1], apply the margin to the target
  // column local_label[b] (-1: the target is not in this shard), multiply by the scale.
  // Then row_max [batch] = max over the row of the logits.
  virtual void margin_logits(Tensor& cos, const Tensor& local_label, const MarginParams& margin,
                             Tensor& row_max) = 0;
  // In place: logits := exp(logits - global_max[b]); row_sum [batch] = sum of the row.
  virtual void exp_and_row_sum(Tensor& logits, const Tensor& global_max, Tensor& row_sum) = 0;
  // In place: p := exp / global_sum; target_prob[b] = p at local_label[b] (0 when -1);
  // then p becomes the gradient w.r.t. cos: scale * (p - onehot) / global_batch (the margin
  // is straight-through, as in PartialFC_V2; scale_target_column makes it exact).
  virtual void softmax_grad(Tensor& exp_logits, const Tensor& global_sum,
                            const Tensor& local_label, double scale, std::int64_t global_batch,
                            Tensor& target_prob) = 0;
  // arcface_torch's inter-class filtering, in place on cos [batch, classes] before
  // margin_logits: every entry above `threshold` that is not its row's target column
  // local_label[b] becomes 0 (-1: the target lives on another rank, so every column is a
  // negative). keep [batch, classes] u8 is 0 where an entry was filtered, 1 elsewhere.
  virtual void interclass_filter(Tensor& cos, const Tensor& local_label, double threshold,
                                 Tensor& keep) = 0;
  // grad [batch, classes] *= keep: a filtered cosine was replaced by a constant,
  // so no gradient reaches it.
  virtual void interclass_filter_backward(Tensor& grad, const Tensor& keep) = 0;
  // The exact gradient of the margin (the seed's losses.py differentiates its acos and cos):
  // factor [batch] = d/dc (cos(m1 * acos(c) + m2) - m3) at the target's cosine
  // c = clamp(cos[b, local_label[b]], -1, 1), that is m1 * sin(m1 * theta + m2) / sin(theta);
  // 1 for CosFace and no margin (m1 = 1, m2 = 0), and where the label is -1. Infinite at
  // c = +-1, where the seed's own arithmetic is not finite either. Call it on cos before
  // margin_logits overwrites it.
  virtual void margin_gradient_factor(const Tensor& cos, const Tensor& local_label,
                                      const MarginParams& margin, Tensor& factor) = 0;
  // grad[b, local_label[b]] *= factor[b] for every row whose label is not -1: turns
  // softmax_grad's straight-through gradient into the exact one.
  virtual void scale_target_column(Tensor& grad, const Tensor& local_label,
                                   const Tensor& factor) = 0;

  // ---- optimisers (PyTorch semantics) ---------------------------------------------------
  // w and its optimiser state share one type: f32 masters, f64 in an f64 run (the CPU
  // backend). g has that type, or is f16 beside f32 masters on cuda. Or w is a matrix of
  // stored values (class centres under classifier_storage): f16 or bf16, its moments f16 or
  // bf16 each, and g of a computing type (f32; f64 in an f64 run): the stored values are read
  // into g's type, the arithmetic is the same, and each result is stored as `rounding` says.
  // torch.optim.SGD: g' = g + weight_decay * w;  m = momentum * m + g';  w -= lr * m.
  virtual void sgd_update(Tensor& w, const Tensor& g, Tensor& m, double lr, double momentum,
                          double weight_decay, const StochasticRounding& rounding) = 0;
  // The same on the rows index[i] of w and m, with gradient row i of g (sparse PartialFC).
  virtual void sgd_update_rows(Tensor& w, Tensor& m, const Tensor& index, const Tensor& g,
                               double lr, double momentum, double weight_decay,
                               const StochasticRounding& rounding) = 0;
  // torch.optim.AdamW: w *= 1 - lr * wd;  m = b1 * m + (1 - b1) * g;
  // v = b2 * v + (1 - b2) * g * g;  w -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
  virtual void adamw_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v,
                            const AdamWParams& p, const StochasticRounding& rounding) = 0;
  // The same on the rows index[i] of w, m and v, with gradient row i of g (sparse PartialFC:
  // other rows and their moments untouched).
  virtual void adamw_update_rows(Tensor& w, Tensor& m, Tensor& v, const Tensor& index,
                                 const Tensor& g, const AdamWParams& p,
                                 const StochasticRounding& rounding) = 0;
  // torch.optim's update of the whole of w (SGD: and m; AdamW: and m, v) when its gradient is
  // sparse: row i of g at row index[i] (sorted, unique), zero on every other row. Every row
  // decays and every moment moves, exactly as for a dense zero-filled gradient, without one
  // being materialised (PartialFC_V2's centres: one dense parameter, gradient on the sampled
  // rows only). Stored 16-bit w and moments round every row's results as `rounding` says.
  virtual void sgd_update_sparse_grad(Tensor& w, Tensor& m, const Tensor& index, const Tensor& g,
                                      double lr, double momentum, double weight_decay,
                                      const StochasticRounding& rounding) = 0;
  virtual void adamw_update_sparse_grad(Tensor& w, Tensor& m, Tensor& v, const Tensor& index,
                                        const Tensor& g, const AdamWParams& p,
                                        const StochasticRounding& rounding) = 0;
};

// The CPU and meta backends always exist; the CUDA one when built with CUDA and a GPU is visible
// (throws pfc::Error otherwise). device_ordinal selects the GPU; plan_for is the backend a
// meta backend plans (cpu or cuda).
std::unique_ptr<Backend> make_backend(BackendKind kind, int device_ordinal = 0,
                                      BackendKind plan_for = BackendKind::cuda);
bool cuda_compiled();
int cuda_device_count();
// The bytes a CUDA backend on that GPU would reserve for its arena now (PFC_CUDA_ARENA_BYTES,
// or kCudaArenaFreeFraction of its free memory), before one is made; pfc::Error without CUDA.
std::int64_t cuda_arena_reservation_bytes(int device_ordinal);

}  // namespace pfc
