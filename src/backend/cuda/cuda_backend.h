// The CUDA backend: cuDNN convolutions (NHWC, tensor cores, plans cached per shape),
// cuBLAS GEMMs and our own kernels for everything else. Activations may be f16 or f32;
// parameters, statistics and every reduction stay f32.
//
// One backend drives one GPU from one process: the constructor makes `device_ordinal` the
// current device, and all work is queued on the backend's single stream (stream()), in
// order. Device memory comes from the backend's DeviceArena; pinned host memory for batch
// buffers from staging_allocator(). Host values (sum_of_squares, all_finite) and
// synchronize() wait for the stream; synchronize() also reports index and label errors
// that kernels found since the last wait.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "backend/backend.h"

namespace pfc {

class DeviceArena;

int cuda_visible_device_count();
// DeviceArena::default_reservation_bytes() on that GPU (made current).
std::size_t cuda_default_arena_bytes(int device_ordinal);
std::unique_ptr<Backend> make_cuda_backend(int device_ordinal);

class CudaBackend final : public Backend {
 public:
  // arena_bytes = 0: DeviceArena::default_reservation_bytes() (PFC_CUDA_ARENA_BYTES or 92%
  // of the free device memory).
  explicit CudaBackend(int device_ordinal, std::size_t arena_bytes = 0);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  DeviceKind device() const override { return DeviceKind::cuda; }
  std::string name() const override;
  Allocator& allocator() override;
  void synchronize() override;
  const AllocationPolicy& allocation_policy() const override {
    return pfc::allocation_policy(BackendKind::cuda);
  }

  int device_ordinal() const;
  cudaStream_t stream() const;
  DeviceArena& arena();
  Allocator& staging_allocator() override;
  std::int64_t device_overhead_bytes() override;

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
  struct Resources;
  // Device scratch for one primitive, returned to the arena when the primitive has queued
  // its kernels (stream order makes the early return safe).
  Tensor scratch(std::size_t bytes);
  int* error_flag();
  // Waits for the stream and turns a code recorded by a kernel into an Error.
  void wait_and_check();

  std::unique_ptr<Resources> r_;
};

}  // namespace pfc
