// The PartialFC classifier head of one rank: its class centres and their optimiser state, the
// margin softmax over the global batch (with arcface_torch's optional inter-class filtering),
// and the classifier's optimiser step, for the three ways of holding the classifier (see
// pfc_method.h). Written only against Backend and Comm, so the same code runs on the CPU with
// MpiComm and on the GPU with NcclComm.
//
// One training step: set_labels (collective, host-side), forward_backward (loss, the gradient
// of this rank's embeddings, and the class centres' gradient kept for step), then step. The
// trainer calls set_labels before it queues the backbone's forward, so that the class sampler
// in forward_backward runs on the host while the device computes the embeddings. With
// gradient accumulation, each micro-batch's forward_backward adds its centre gradient to the
// step's, and step updates every row sampled in any of them (or, with the dense update, every
// row, those with a gradient included).
//
// Both versions of arcface_torch are options: the seed's (sampled update, exact margin
// gradient) and today's PartialFC_V2 (dense update, straight-through margin); see
// optim/classifier_update.h and pfc/margin_gradient.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backend/backend.h"
#include "comm/comm.h"
#include "optim/classifier_update.h"
#include "optim/optimizer.h"
#include "pfc/margin_gradient.h"
#include "pfc/pfc_method.h"
#include "pfc/shard_layout.h"

namespace pfc {

struct PartialFcOptions {
  std::int64_t num_classes = 0;
  std::int64_t embedding_size = 0;
  // pfc only (dp and mp use every class whatever it says): the fraction of each shard's
  // centres a step uses, at least its positives; 0 uses the positives alone (PartialFC_V2).
  double sample_rate = 1.0;
  MarginParams margin;
  PfcMethod method = PfcMethod::pfc;
  std::uint64_t seed = 0;  // class-centre init and the sampler's draws
  // The element type of the centres, their moments and gradient, the embeddings and their
  // gradient, and the margin softmax: f32, or f64 in an f64 run.
  DType dtype = DType::f32;
  // The operands of the classifier's three GEMMs (logits, and the gradients of the normalised
  // embeddings and centres): `dtype`, or f16 with dtype f32 (pfc's fp16 speed choice; both
  // arcface_torch versions keep the classifier in fp32); products accumulate in f32 then, and
  // everything else stays f32.
  DType gemm_operands = DType::f32;
  // classifier_storage (optim/classifier_storage.h): f32 keeps the centres and their moments
  // in `dtype`; f16 or bf16 stores them in 16 bits, read into `dtype` for the arithmetic and
  // rounded back stochastically by each update.
  DType storage = DType::f32;
  // arcface_torch's interclass_filtering_threshold: negatives whose cosine exceeds it are set
  // to 0 before the margin. 0 turns the filter off.
  double interclass_filtering_threshold = 0.0;
  // The classifier's optimiser (arcface_torch steps the centres with the backbone's).
  OptimizerSettings optimizer;
  // The two versions of arcface_torch. Built in code, a PartialFc defaults to the sampled
  // update and the straight-through margin; a run's config chooses (config.h).
  ClassifierUpdate classifier_update = ClassifierUpdate::sampled;
  MarginGradient margin_gradient = MarginGradient::straight_through;
};

// Whether forward_backward's class-centre gradient replaces the one kept for step() or adds to
// it (the later micro-batches of a step with gradient accumulation).
enum class CentreGradient { replace, accumulate };

// The power of two that d loss / d cos is multiplied by before it is rounded to f16: every
// element is at most scale_s / global_batch times the largest exact-margin factor (1 with the
// straight-through margin) in magnitude, and this brings that bound to at most 2^14, so nothing
// overflows and small probabilities keep f16's full precision instead of flushing to zero.
// Unscaling by its inverse is exact. A factor that is not finite leaves the bound at 1 (that
// gradient is not finite in any precision).
double f16_cos_grad_scale(double scale_s, std::int64_t global_batch, double largest_factor = 1.0);

class PartialFc {
 public:
  // The centres start as N(0, 0.01) keyed by their global index: the same global matrix on
  // any number of ranks. The optimiser's moments start at zero.
  PartialFc(Backend& backend, Comm& comm, const PartialFcOptions& options);
  PartialFc(const PartialFc&) = delete;
  PartialFc& operator=(const PartialFc&) = delete;

  const PartialFcOptions& options() const { return options_; }
  // The classes this rank holds: its shard (mp, pfc) or all of them (dp, a one-rank layout).
  const ShardLayout& layout() const { return layout_; }

  // This rank's centres, [layout().num_local, emb] of their stored type (options().dtype, or
  // the 16-bit storage type) on the backend's device, and their optimiser state (moments of
  // the same shape, in stored_moment_type; checkpoints read and write both directly).
  Tensor& weight() { return weight_; }
  OptimizerState& optimizer_state() { return state_; }
  const Optimizer& optimizer() const { return *optimizer_; }
  // Takes this rank's rows of a global [num_classes, emb] f32 or f64 matrix (any device),
  // converted to the stored type (rounded to nearest).
  void set_global_weight(const Tensor& global);
  // Collective: the global [num_classes, emb] centres in their stored type, on the host of
  // every rank.
  Tensor gather_global_weight();

  // From now on, sample exactly these classes (sorted global ids, e.g. a golden file's
  // sampled_index) instead of drawing them; each rank uses the ones it owns. pfc only.
  void inject_sampled_classes(std::vector<std::int64_t> global_index);
  void clear_injected_classes();

  // Collective: gathers the global batch's labels. labels [b] i64 on the host, each in
  // [0, num_classes) (checked on the gathered batch, so every rank throws alike); every rank
  // passes the same b. Waits for the device's queued work.
  void set_labels(const Tensor& labels);
  // embeddings [b, emb] of options().dtype on the backend's device, for the labels last set.
  // Writes d loss / d embeddings to embeddings_grad [b, emb] (allocated when undefined) and
  // returns the loss, the mean over the global batch of -log(max(p_target, 1e-30)). `draw`
  // keys the sampler's draw (distinct for every micro-batch of a run). `mode`: whether the
  // centre gradient starts this step's or adds to it.
  double forward_backward(const Tensor& embeddings, Tensor& embeddings_grad, std::int64_t draw,
                          CentreGradient mode = CentreGradient::replace);
  // set_labels, then forward_backward.
  double forward_backward(const Tensor& embeddings, const Tensor& labels,
                          Tensor& embeddings_grad, std::int64_t draw,
                          CentreGradient mode = CentreGradient::replace);

  // One optimiser update of the centres the forward_backward calls since the last step used:
  // every row (dp, mp); in pfc, the rows sampled in any of them (sampled: other rows and
  // their moments untouched) or every row with a zero gradient off those (dense). The centres'
  // gradient is released with it.
  void step(double lr);

  // What the forward_backward calls since the last step used and produced (until step):
  // the local rows (sorted; every row for dp and mp; none in a plan, which draws no classes),
  std::vector<std::int64_t> sampled_index() const;
  // their gradient [sampled, emb] (dp: already summed over ranks),
  const Tensor& sampled_weight_grad() const { return weight_grad_; }
  // the gradient of the whole shard [num_local, emb], zero on rows that were not sampled,
  Tensor shard_weight_grad();
  // and, collectively, the global [num_classes, emb] gradient on the host of every rank.
  Tensor gather_global_weight_grad();

 private:
  struct HeadGradients {
    Tensor embeddings_grad;  // [rows, emb]
    Tensor weight_grad;      // [classes, emb]
    double loss_sum = 0.0;   // sum over the rows of -log(max(p_target, 1e-30))
  };

  // pfc on the meta backend (a plan), unless the classes are injected: the sampler only counts
  // the classes it would draw, and the sampled rows have no index on the host.
  bool counts_classes_only() const;
  void check_batch_sizes(std::int64_t batch);
  void check_labels(const std::vector<std::int64_t>& global_labels, std::int64_t batch) const;
  // An f16 copy of x, the GEMM operand of the fp16 classifier.
  Tensor to_half(const Tensor& x);
  // The largest |factor| of the exact margin gradient's factors on this rank (1 for none; an
  // infinite or NaN one counts as infinite), read on the host: the f16 scale leaves it room.
  double largest_magnitude(const Tensor& factor);
  // The margin softmax and its backward for embeddings [rows, emb] against centres
  // [classes, emb]; class_sharded: the classes of a row are spread over the ranks, so the
  // row max, row sum and target probability are all-reduced. The centres are taken by value:
  // a gathered copy (pfc) is released as soon as it is normalised.
  HeadGradients margin_softmax(const Tensor& embeddings, Tensor centres,
                               const Tensor& local_label, std::int64_t global_batch,
                               bool class_sharded);
  double data_parallel_step(const Tensor& embeddings, std::vector<std::int64_t> labels,
                            Tensor& embeddings_grad, std::int64_t global_batch,
                            CentreGradient mode);
  double sharded_step(const Tensor& embeddings, const std::vector<std::int64_t>& global_labels,
                      Tensor& embeddings_grad, std::int64_t draw, CentreGradient mode);
  // Keeps a micro-batch's centre gradient for step(): as it is, or added to the pending one.
  // sampled: its rows (pfc), with the index on the device.
  void keep_weight_grad(Tensor grad, std::vector<std::int64_t> sampled, Tensor sampled_device,
                        CentreGradient mode);

  Backend& backend_;
  Comm& comm_;
  PartialFcOptions options_;
  ShardLayout layout_;
  Tensor weight_;
  std::unique_ptr<Optimizer> optimizer_;
  OptimizerState state_;
  std::optional<std::vector<std::int64_t>> injected_;

  // The global batch's labels from set_labels, consumed by the next forward_backward.
  std::vector<std::int64_t> global_labels_;
  bool labels_pending_ = false;

  // The rows (pfc) and gradient of the forward_backward calls since the last step.
  std::vector<std::int64_t> sampled_;
  Tensor sampled_device_;
  Tensor weight_grad_;
  bool grad_pending_ = false;
};

}  // namespace pfc
