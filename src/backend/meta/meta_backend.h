// The meta backend: plans a run without running it. Its tensors have a shape, a dtype and a
// purpose but no storage (meta_allocator.h); its primitives check their operands exactly as the
// backend it plans for does (operand_checks.h with that backend's rules), compute nothing, and
// count the arithmetic they stand for (arithmetic_tally.h). It answers as the planned backend
// for what the algorithm allocates (allocation_policy()). Reads to the host give zeros,
// all_finite says finite and sum_of_squares 0, so the algorithm takes its ordinary path and
// allocates what a real step allocates: the memory ledger's peaks are the planned run's. It
// holds no data on the host either: what a run stages there (batches, index uploads, initial
// values) is counted but not allocated (size_only_host_allocator.h), and the class sampler
// only counts the classes it would draw (pfc/partial_fc.cpp).
//
// Adding a Backend primitive here is two lines in meta_backend_ops.cpp: its operand check and
// what it costs (count(name, tensor_flops, other_flops, bytes(read), bytes(written))).
#pragma once

#include <initializer_list>

#include "backend/backend.h"
#include "backend/meta/arithmetic_tally.h"
#include "backend/meta/meta_allocator.h"
#include "backend/operand_rules.h"

namespace pfc {

class MetaBackend final : public Backend {
 public:
  // plan_for: cpu or cuda.
  explicit MetaBackend(BackendKind plan_for);

  DeviceKind device() const override { return DeviceKind::meta; }
  std::string name() const override;
  Allocator& allocator() override { return allocator_; }
  // The batches' host buffers: size-only, counted in the host ledger (size_only_host_allocator.h).
  Allocator& staging_allocator() override;
  void synchronize() override {}
  const AllocationPolicy& allocation_policy() const override { return policy_; }

  BackendKind plan_for() const { return policy_.kind; }
  // Every primitive's cost since construction.
  const ArithmeticTally& tally() const { return tally_; }
  // The most host memory one primitive of the planned CPU backend takes outside the memory
  // ledger (conv2d_host_scratch_bytes, gemm_host_scratch_bytes); 0 when planning cuda, whose
  // library workspaces a plan models instead.
  std::int64_t largest_host_scratch_bytes() const { return largest_host_scratch_; }

  void copy(const Tensor& src, Tensor& dst) override;
  void fill(Tensor& x, double value) override;
  void fill_normal(Tensor& x, std::uint64_t key, std::uint64_t first_index,
                   double stddev) override;
  void cast(const Tensor& src, Tensor& dst) override;

  void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                      Tensor& y) override;
  void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                            Tensor& dx) override;
  void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                              Tensor& dw) override;

  void batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               Tensor& running_mean, Tensor& running_var, double momentum,
                               double eps, Tensor& y, Tensor& saved_mean,
                               Tensor& saved_invstd) override;
  void batchnorm_forward_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   const Tensor& running_mean, const Tensor& running_var,
                                   double eps, Tensor& y) override;
  void batchnorm_forward_saved(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               const Tensor& saved_mean, const Tensor& saved_invstd,
                               Tensor& y) override;
  void batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                          const Tensor& saved_mean, const Tensor& saved_invstd, Tensor& dx,
                          Tensor& dgamma, Tensor& dbeta) override;

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
  // One call of `primitive`: its floating-point operations and the bytes it reads and writes.
  void count(std::string_view primitive, double tensor_flops, double other_flops,
             double bytes_read, double bytes_written);
  // A convolution or GEMM of `flops`: on tensor cores when its operands are f16.
  void count_products(std::string_view primitive, double flops, DType operands, double bytes_read,
                      double bytes_written);
  // The bytes of these tensors together.
  static double bytes(std::initializer_list<const Tensor*> tensors);
  void note_host_scratch(std::int64_t bytes);
  // The planned CPU backend allocates `bytes` of workspace for the time of one primitive
  // (conv2d_workspace_bytes): so does the plan, so that the ledger peaks agree.
  void hold_workspace(std::int64_t bytes);

  const AllocationPolicy& policy_;
  const OperandRules rules_;
  MetaAllocator allocator_;
  ArithmeticTally tally_;
  std::int64_t largest_host_scratch_ = 0;
};

}  // namespace pfc
