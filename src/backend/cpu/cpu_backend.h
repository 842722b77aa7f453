// The CPU backend: readable reference loops, with GEMM and im2col convolutions through
// OpenBLAS, computing in f32, or f64 when given f64 tensors (an f64 run; the finite-difference
// gradient checker runs every primitive in f64). f32 convolutions run on oneDNN where pfc is
// built with it (onednn_conv2d.h), and the per-element loops on the OpenMP threads of the
// process (cpu_parallel.h); the loops beside them stay the oracle.
#pragma once

#include <functional>
#include <map>
#include <tuple>

#include "backend/backend.h"
#include "backend/cpu/onednn_conv2d.h"
#include "backend/operand_rules.h"

namespace pfc {

// Host memory a CPU kernel takes outside the memory ledger, which a plan of a CPU run models
// (backend/meta): a reference convolution's im2col chunk and, in the forward pass of f32
// operands, their f64 copies; f16 or bf16 operands that are widened, their f32 copies.
std::int64_t conv2d_host_scratch_bytes(const Conv2dGeometry& g, DType dtype,
                                       cpu::ConvDirection direction);
std::int64_t gemm_host_scratch_bytes(bool transpose_a, bool transpose_b, double alpha,
                                     const Tensor& a, const Tensor& b, double beta,
                                     const Tensor& c);
// The `workspace` a convolution or a bf16 GEMM allocates from the backend's allocator for the
// time of the call (oneDNN's scratchpad and reordered filter; 0 on the reference loops): in
// the ledger, so a plan allocates the same.
std::int64_t conv2d_workspace_bytes(const Conv2dGeometry& g, DType dtype,
                                    cpu::ConvDirection direction);
std::int64_t gemm_workspace_bytes(bool transpose_a, bool transpose_b, double alpha,
                                  const Tensor& a, const Tensor& b, double beta, const Tensor& c);

// How a CpuBackend computes f32 convolutions: on oneDNN where pfc is built with it (fast; f32
// accumulation, as PyTorch's CPU), or on the reference loops with the forward pass in f64 (the
// accuracy `pfc golden` holds arcface_torch's own fp32 to; several times slower). f64 always
// runs on the reference loops.
enum class CpuConvolutions { onednn, reference };

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(CpuConvolutions convolutions = CpuConvolutions::onednn)
      : convolutions_(convolutions) {}
  DeviceKind device() const override { return DeviceKind::cpu; }
  std::string name() const override { return "cpu"; }
  Allocator& allocator() override { return allocator_; }
  void synchronize() override {}
  void keep_prepared_filters() override { keep_prepared_filters_ = true; }
  const AllocationPolicy& allocation_policy() const override {
    return pfc::allocation_policy(BackendKind::cpu);
  }

  void copy(const Tensor& src, Tensor& dst) override;
  void fill(Tensor& x, double value) override;
  void fill_normal(Tensor& x, std::uint64_t key, std::uint64_t first_index,
                   double stddev) override;
  void cast(const Tensor& src, Tensor& dst) override;

  void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                      Tensor& y) override;
  void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                            Tensor& dx) override;
  // One oneDNN convolution with bias and post-ops where built with oneDNN and it takes the
  // shape; the reference passes otherwise (and always in f64 or with the reference
  // convolutions).
  void conv2d_forward_fused(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                            const ConvEpilogue& epilogue, Tensor& y) override;
  bool fuses_inference() const override {
    return convolutions_ == CpuConvolutions::onednn && cpu::onednn_built();
  }
  void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                              Tensor& dw) override;

  void batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               Tensor& running_mean, Tensor& running_var, double momentum,
                               double eps, Tensor& y, Tensor& saved_mean,
                               Tensor& saved_invstd) override;
  void batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                          const Tensor& saved_mean, const Tensor& saved_invstd, Tensor& dx,
                          Tensor& dgamma, Tensor& dbeta) override;
  void batchnorm_forward_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   const Tensor& running_mean, const Tensor& running_var,
                                   double eps, Tensor& y) override;
  void batchnorm_forward_saved(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               const Tensor& saved_mean, const Tensor& saved_invstd,
                               Tensor& y) override;

  void prelu_forward(const Tensor& x, const Tensor& slope, Tensor& y) override;
  void prelu_backward(const Tensor& dy, const Tensor& x, const Tensor& slope, Tensor& dx,
                      Tensor& dslope) override;

  void add(const Tensor& a, const Tensor& b, Tensor& y) override;
  void axpy(double alpha, const Tensor& x, Tensor& y) override;
  void scale(Tensor& x, double alpha) override;
  double sum_of_squares(const Tensor& x) override;
  bool all_finite(const Tensor& x) override;

  void gemm(bool transpose_a, bool transpose_b, double alpha, const Tensor& a, const Tensor& b,
            double beta, Tensor& c) override;
  void add_row_vector(Tensor& x, const Tensor& bias) override;
  void sum_rows(const Tensor& x, Tensor& out) override;

  void batched_gemm(const BatchedGemmGeometry& g, double alpha, const Tensor& a, const Tensor& b,
                    double beta, Tensor& c) override;

  void layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps,
                         Tensor& y, Tensor& saved_mean, Tensor& saved_invstd) override;
  void layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                          const Tensor& saved_mean, const Tensor& saved_invstd, Tensor& dx,
                          Tensor& dgamma, Tensor& dbeta) override;
  void softmax_rows_forward(const Tensor& x, Tensor& y) override;
  void softmax_rows_backward(const Tensor& dy, const Tensor& y, Tensor& dx) override;
  void relu6_forward(const Tensor& x, Tensor& y) override;
  void relu6_backward(const Tensor& dy, const Tensor& y, Tensor& dx) override;
  void scale_samples(const Tensor& x, const Tensor& factor, Tensor& y) override;

  void l2_normalize_rows(const Tensor& x, Tensor& y, Tensor& norms) override;
  void l2_normalize_rows_backward(const Tensor& dy, const Tensor& y, const Tensor& norms,
                                  Tensor& dx) override;
  void gather_rows(const Tensor& src, const Tensor& index, Tensor& dst) override;
  void scatter_rows(const Tensor& src, const Tensor& index, Tensor& dst) override;
  void margin_logits(Tensor& cos, const Tensor& local_label, const MarginParams& margin,
                     Tensor& row_max) override;
  void exp_and_row_sum(Tensor& logits, const Tensor& global_max, Tensor& row_sum) override;
  void softmax_grad(Tensor& exp_logits, const Tensor& global_sum, const Tensor& local_label,
                    double scale, std::int64_t global_batch, Tensor& target_prob) override;
  void interclass_filter(Tensor& cos, const Tensor& local_label, double threshold,
                         Tensor& keep) override;
  void interclass_filter_backward(Tensor& grad, const Tensor& keep) override;
  void margin_gradient_factor(const Tensor& cos, const Tensor& local_label,
                              const MarginParams& margin, Tensor& factor) override;
  void scale_target_column(Tensor& grad, const Tensor& local_label,
                           const Tensor& factor) override;

  void sgd_update(Tensor& w, const Tensor& g, Tensor& m, double lr, double momentum,
                  double weight_decay, const StochasticRounding& rounding) override;
  void sgd_update_rows(Tensor& w, Tensor& m, const Tensor& index, const Tensor& g, double lr,
                       double momentum, double weight_decay,
                       const StochasticRounding& rounding) override;
  void adamw_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v, const AdamWParams& p,
                    const StochasticRounding& rounding) override;
  void adamw_update_rows(Tensor& w, Tensor& m, Tensor& v, const Tensor& index, const Tensor& g,
                         const AdamWParams& p, const StochasticRounding& rounding) override;
  void sgd_update_sparse_grad(Tensor& w, Tensor& m, const Tensor& index, const Tensor& g,
                              double lr, double momentum, double weight_decay,
                              const StochasticRounding& rounding) override;
  void adamw_update_sparse_grad(Tensor& w, Tensor& m, Tensor& v, const Tensor& index,
                                const Tensor& g, const AdamWParams& p,
                                const StochasticRounding& rounding) override;

 private:
  // A host f32 copy of f16 or bf16 operands: exact, and so is the product of two of them in
  // f32, so f32 arithmetic on the copies is that of f16 or bf16 products accumulated in f32.
  Tensor widened(const Tensor& half);
  // Runs the convolution on oneDNN with a workspace from allocator_ when oneDNN takes it (f32
  // or bf16 operands a and b, a shape it has a kernel for); false when the reference loops
  // must. `filter` is w of a forward or backward_data call (nullptr for backward_filter).
  bool conv2d_on_onednn(const Conv2dGeometry& g, cpu::ConvDirection direction, const Tensor& a,
                        const Tensor& b, Tensor& out, const Tensor* filter);
  // w in the layout of its oneDNN primitive, kept from an earlier call while w's values are
  // unchanged; nullptr unless keep_prepared_filters() was called and the primitive reorders.
  const void* prepared_filter(const Conv2dGeometry& g, cpu::ConvDirection direction,
                              const Tensor& w, void* workspace);
  // The same for any use of w (a direction, or a fused convolution's kind): w in `layout`,
  // written by `prepare` into the bytes given when w's values or the layout changed.
  const void* kept_filter(const Tensor& w, int use, const cpu::PreparedFilterLayout& layout,
                          const std::function<void(void*)>& prepare);

  // A filter prepared for a direction of convolution: the values it is of, in which layout.
  // One per filter and use: a call in another layout (the partial last batch of an
  // embedding run) prepares it again rather than keeping a second copy.
  struct PreparedFilter {
    std::uint64_t version = 0;
    const void* layout = nullptr;
    Tensor values;
  };
  using PreparedFilterKey = std::tuple<std::uint64_t, std::size_t, int>;

  CpuConvolutions convolutions_;
  bool keep_prepared_filters_ = false;
  std::map<PreparedFilterKey, PreparedFilter> prepared_filters_;
  HostAllocator allocator_;
  const OperandRules rules_ = operand_rules(BackendKind::cpu, DeviceKind::cpu);
};

}  // namespace pfc
