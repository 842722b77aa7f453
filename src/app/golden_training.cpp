#include "app/golden_training.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "app/golden_backbone.h"
#include "config/config.h"
#include "core/error.h"
#include "pfc/partial_fc.h"
#include "pfc/shard_gather.h"
#include "train/loss_scaler.h"
#include "train/lr_schedule.h"
#include "train/training_step.h"

namespace pfc {

namespace {

OptimizerSettings optimizer_of(const GoldenTraining& t) {
  OptimizerSettings s;
  s.kind = parse_optimizer_kind(t.optimizer);
  s.momentum = t.momentum;
  s.weight_decay = t.weight_decay;
  s.beta1 = t.beta1;
  s.beta2 = t.beta2;
  s.eps = t.eps;
  return s;
}

// The stored batches the steps train on, on the device: stored batch i is micro-batch i of
// every step, or the batch of the steps that training.step_batch gives it.
struct StoredBatches {
  std::vector<Tensor> images, labels;
};

StoredBatches stored_batches(const GoldenFile& file, const std::string& group,
                             const GoldenTraining& training, Backend& backend) {
  int count = static_cast<int>(training.gradient_acc);
  for (const int b : training.step_batch) count = std::max(count, b + 1);
  StoredBatches b;
  for (int i = 0; i < count; ++i) {
    b.images.push_back(golden_images(backend, file.input(group, i)));
    b.labels.push_back(file.labels(group, i));
  }
  return b;
}

// Stored batch of micro-batch i of step s.
std::size_t batch_of(const GoldenTraining& training, std::int64_t step, std::int64_t i) {
  if (training.step_batch.empty()) return static_cast<std::size_t>(i);
  return static_cast<std::size_t>(training.step_batch[static_cast<std::size_t>(step)]);
}

// The rate of every optimiser step: the case's constant lr, or the one the trainer's own
// schedule (LrSchedule, lr_schedule = "polynomial_warmup") gives it for a run whose epoch is one
// global batch, so that its warm-up and total count the case's scheduler steps.
std::vector<double> step_rates(const GoldenTraining& training, std::int64_t batch,
                               const std::string& case_path) {
  std::vector<double> rates(static_cast<std::size_t>(training.steps), training.lr);
  if (training.lr_schedule.empty()) return rates;
  if (training.lr_schedule != "PolynomialLRWarmup")
    throw UsageError(fmt::format("{}: lr_schedule '{}' is not one pfc golden knows "
                                 "(PolynomialLRWarmup)",
                                 case_path, training.lr_schedule));
  // An epoch of one iteration has no whole optimiser step of several micro-batches.
  PFC_CHECK(training.gradient_acc == 1, "{}: a scheduled case of gradient_acc {} (pfc golden "
            "takes 1)", case_path, training.gradient_acc);
  Config cfg;
  cfg.lr_schedule = "polynomial_warmup";
  cfg.lr_power = training.lr_power;
  cfg.lr_scaling = "none";
  cfg.lr = training.lr;
  cfg.batch_size = batch;
  cfg.num_image = batch;
  cfg.num_epoch = training.total_steps;
  cfg.warmup_epoch = training.warmup_steps;
  const LrSchedule schedule(cfg, 1);
  for (std::int64_t s = 0; s < training.steps; ++s)
    rates[static_cast<std::size_t>(s)] = schedule.lr(s);
  return rates;
}

}  // namespace

void check_golden_training(const GoldenFile& file, const GoldenNetwork& network,
                           const GoldenCase& golden_case, const GoldenTraining& training,
                           Backend& backend, Comm& comm, DType dtype, DType activations,
                           DType gemm_operands, GoldenTable& table) {
  const std::string& group = network.group;
  const std::string case_path = group + "/" + golden_case.name;
  const std::unique_ptr<Backbone> built = golden_backbone(file, network, backend, activations);
  Backbone& model = *built;

  PartialFcOptions head_options;
  head_options.num_classes = network.num_classes;
  head_options.embedding_size = network.embedding_size;
  head_options.margin =
      MarginParams{golden_case.m1, golden_case.m2, golden_case.m3, network.scale_s};
  head_options.method = golden_case.sample_rate < 1.0 ? PfcMethod::pfc : PfcMethod::mp;
  head_options.sample_rate = golden_case.sample_rate;
  head_options.dtype = dtype;
  head_options.gemm_operands = gemm_operands;
  head_options.interclass_filtering_threshold = golden_case.interclass_filtering_threshold;
  head_options.optimizer = optimizer_of(training);
  head_options.classifier_update = parse_classifier_update(golden_case.classifier_update);
  head_options.margin_gradient = parse_margin_gradient(golden_case.margin_gradient);
  PartialFc head(backend, comm, head_options);
  head.set_global_weight(file.class_centres(network));

  // In f16 the backbone runs on a scaled loss, as in training; the scaler starts at the batch
  // size as the trainer's does. Elsewhere it is idle.
  LossScaler scaler(activations == DType::f16, network.batch);
  TrainingStep step(backend, comm, model, head, scaler,
                    {training.gradient_acc, training.clip_grad_norm, head_options.optimizer});
  const StoredBatches batches = stored_batches(file, group, training, backend);
  const std::vector<double> rates = step_rates(training, network.batch, case_path);
  std::vector<double> losses;
  for (std::int64_t s = 0; s < training.steps; ++s) {
    if (!training.sampled_index.empty())
      head.inject_sampled_classes(training.sampled_index[static_cast<std::size_t>(s)]);
    const StepResult result = step.run(
        [&](std::int64_t i) {
          const std::size_t k = batch_of(training, s, i);
          return MicroBatch{&batches.images[k], &batches.labels[k]};
        },
        s, rates[static_cast<std::size_t>(s)]);
    losses.insert(losses.end(), result.losses.begin(), result.losses.end());
  }

  const auto losses_ref = file.reference(group, golden_case.name, "losses");
  PFC_CHECK(losses_ref && losses_ref->values.numel() == static_cast<std::int64_t>(losses.size()),
            "{} stores no losses, or not one per micro-batch ({})", case_path, losses.size());
  Tensor losses_host = Tensor::host({static_cast<std::int64_t>(losses.size())}, DType::f64);
  std::copy(losses.begin(), losses.end(), losses_host.data<double>());
  compare_reference(table, "losses", losses_host, *losses_ref);
  if (!training.lrs.empty()) {
    PFC_CHECK(training.lrs.size() == rates.size(), "{} stores {} lrs for {} steps", case_path,
              training.lrs.size(), rates.size());
    table.compare_exact("lrs", rates.data(), training.lrs.data(),
                        static_cast<std::int64_t>(rates.size()),
                        "the rate each step applied; must be equal");
  }

  for (const Parameter* p : model.parameters()) {
    const std::string path = "params/" + p->name;
    const auto ref = file.reference(group, golden_case.name, path);
    if (!ref) {
      if (p->trainable) table.skip(p->name, "not in the file");
      continue;
    }
    // A bias whose exact gradient is 0 (a training-mode batch-norm follows it) was moved by
    // rounding noise alone, and AdamW divides by that noise: its value is no reference.
    if (file.has(case_path + "/" + path) &&
        h5::has_attribute(file.file_id(), case_path + "/" + path, "exact_zero_grad")) {
      table.skip(p->name, "exact-zero gradient: its update is rounding noise");
      continue;
    }
    compare_reference(table, p->name, to_host_f64(backend, model.export_parameter(*p)), *ref);
  }
  const auto centres_ref = file.reference(group, golden_case.name, "pfc.weight");
  PFC_CHECK(centres_ref.has_value(), "{} stores no pfc.weight", case_path);
  compare_reference(table, "pfc.weight", to_host_f64(backend, head.gather_global_weight()),
                    *centres_ref);
  // The seed's file keeps the momentum rows too: the sampled update leaves the others as they
  // were, the dense one moves them all.
  if (const auto momentum_ref = file.reference(group, golden_case.name, "pfc.momentum")) {
    PFC_CHECK(head.optimizer().kind() == OptimizerKind::sgd,
              "{} stores pfc.momentum, but its optimiser is not SGD", case_path);
    const Tensor momentum = gather_class_shards(backend, comm, head.layout(),
                                                head.optimizer_state().moments[0]);
    compare_reference(table, "pfc.momentum", to_host_f64(backend, momentum), *momentum_ref);
  }
  for (const Buffer* b : model.buffers()) {
    const auto ref = file.reference(group, golden_case.name, "running_stats/" + b->name);
    if (ref) compare_reference(table, b->name, to_host_f64(backend, b->value), *ref);
  }
}

}  // namespace pfc
