#include "train/training_step.h"

#include <numeric>
#include <span>

#include "train/grad_clip.h"

namespace pfc {

double StepResult::mean_loss() const {
  if (losses.empty()) return 0.0;
  return std::accumulate(losses.begin(), losses.end(), 0.0) / static_cast<double>(losses.size());
}

TrainingStep::TrainingStep(Backend& backend, Comm& comm, Backbone& model, PartialFc& head,
                           LossScaler& scaler, const TrainingStepOptions& options)
    : backend_(backend),
      comm_(comm),
      model_(model),
      head_(head),
      scaler_(scaler),
      options_(options),
      optimizer_(make_optimizer(options.optimizer)),
      // The frozen features.weight stays outside and is never updated.
      flat_(flatten_parameters(backend, model.parameters())),
      state_(optimizer_->zero_state(backend, flat_.value.shape(), flat_.value.dtype())) {
  PFC_CHECK(options.gradient_acc >= 1, "TrainingStep: gradient_acc is {}, expected at least 1",
            options.gradient_acc);
}

Tensor TrainingStep::backbone_moment(const Parameter& p, std::size_t moment) const {
  PFC_CHECK(moment < state_.moments.size(), "TrainingStep: the {} optimiser has {} moments, not {}",
            optimizer_name(optimizer_->kind()), state_.moments.size(), moment + 1);
  return flat_.view_of(p, state_.moments[moment]);
}

void TrainingStep::accumulate_backbone_gradient(std::int64_t micro_batch) {
  const std::int64_t last = options_.gradient_acc - 1;
  if (last == 0) return;
  if (micro_batch == 0) {
    if (!grad_sum_.defined())
      grad_sum_ = backend_.empty(flat_.grad.shape(), flat_.grad.dtype(), MemoryPurpose::gradients);
    backend_.copy(flat_.grad, grad_sum_);
  } else if (micro_batch < last) {
    backend_.axpy(1.0, flat_.grad, grad_sum_);
  } else {
    backend_.axpy(1.0, grad_sum_, flat_.grad);
  }
}

StepResult TrainingStep::run(const MicroBatchSource& next, std::int64_t step, double lr) {
  const std::int64_t k = options_.gradient_acc;
  StepResult result;
  for (std::int64_t i = 0; i < k; ++i) {
    const MicroBatch batch = next(i);
    PFC_CHECK(batch.images && batch.labels, "TrainingStep: micro-batch {} has no {}", i,
              batch.images ? "labels" : "images");
    // The labels' all-gather waits for the device, so it goes before the forward is queued;
    // the class sampler inside forward_backward then runs on the host while the device
    // computes the embeddings.
    head_.set_labels(*batch.labels);
    // The global batch of micro-batch i is the ranks' batches in rank order.
    const std::int64_t local = batch.images->dim(0);
    model_.set_draw_position(
        {options_.draw_seed, step * k + i,
         (i * comm_.world_size() + comm_.rank()) * local});
    const Tensor embeddings = model_.forward(*batch.images, ForwardMode::training);
    result.losses.push_back(head_.forward_backward(
        embeddings, embeddings_grad_, step * k + i,
        i == 0 ? CentreGradient::replace : CentreGradient::accumulate));
    if (scaler_.enabled()) backend_.scale(embeddings_grad_, scaler_.scale());
    model_.backward(embeddings_grad_);
    accumulate_backbone_gradient(i);
  }

  // Each rank's embedding gradient is already that of the global batch's mean loss, so the
  // ranks' backbone gradients are the parts of one sum (arcface_torch multiplies the embedding
  // gradient by the world size and lets DistributedDataParallel average: the same). The sum is
  // unscaled in the same pass. The ranks agree on the overflow decision explicitly: an
  // all-reduce need not round alike on every rank, and ranks that disagreed about skipping a
  // step would drift apart.
  comm_.all_reduce(flat_.grad, ReduceOp::sum);
  backend_.scale(flat_.grad, 1.0 / scaler_.scale());
  const double overflow = backend_.all_finite(flat_.grad) ? 0.0 : 1.0;
  const bool finite = comm_.all_reduce_scalar(overflow, ReduceOp::max) == 0.0;
  result.backbone_updated = scaler_.update(finite);
  if (result.backbone_updated) {
    clip_grad_norm(backend_, std::span<Tensor>(&flat_.grad, 1), options_.clip_grad_norm);
    optimizer_->update(backend_, flat_.value, flat_.grad, state_, lr, flat_.decay);
    flat_.refresh_working_copies(backend_);
  }
  // The classifier's gradient is not loss-scaled (its f16 GEMMs carry their own scale): it
  // steps every time, as in the seed.
  head_.step(lr);
  return result;
}

}  // namespace pfc
