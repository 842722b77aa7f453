#include "config/config_keys.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

namespace pfc {

namespace {

constexpr ConfigBound at_least(double v) { return {v, true}; }
constexpr ConfigBound above(double v) { return {v, false}; }
constexpr ConfigBound below(double v) { return {v, false}; }
constexpr ConfigBound at_most(double v) { return {v, true}; }

const ConfigKey kKeys[] = {
    // ---- arcface_torch's keys ---------------------------------------------------------------
    {"network", &Config::network,
     "backbone: iresnet depth, \"custom\" for the depths in `layers`, MobileFaceNet "
     "(\"mbf\", \"mbf_large\": arcface_torch's get_mbf and get_mbf_large, 112x112 images), or "
     "one of arcface_torch's Vision Transformers (vit_t ... vit_h, as its get_model builds them; "
     "\"vit\" for the one embed_dim, depth, num_heads, mask_ratio, drop_path_rate and "
     "using_checkpoint describe)",
     {.choices = "r18|r34|r50|r100|r200|custom|mbf|mbf_large|vit_t|vit_t_dp005_mask0|vit_s|"
                 "vit_s_dp005_mask_0|vit_b|vit_b_dp005_mask_005|vit_l_dp005_mask_005|vit_h|vit"}},
    {"embedding_size", &Config::embedding_size, "length of the face embedding",
     {.min = at_least(1)}},
    {"sample_rate", &Config::sample_rate,
     "fraction of each rank's class centres used per step, at least its positive classes; 1.0 "
     "uses all of them, 0 the positives alone (PartialFC_V2)",
     {.min = at_least(0), .max = at_most(1)}},
    {"fp16", &Config::fp16,
     "mixed precision: the backbone in f16 on cuda, and on the cpu its convolutions and token "
     "Linears on bf16 operands (f32 activations); f16 classifier GEMMs unless "
     "classifier_precision = \"fp32\"; a dynamic loss scale where f16 operands are"},
    {"batch_size", &Config::batch_size, "images per rank per step", {.min = at_least(1)}},
    {"lr", &Config::lr,
     "learning rate: applied as given with lr_scaling = \"none\", times global batch / 512 "
     "with \"batch/512\"",
     {.min = above(0)}},
    {"optimizer", &Config::optimizer,
     "sgd (momentum, weight decay added to the gradient) or adamw (torch.optim.AdamW: decoupled "
     "weight decay, betas 0.9/0.999, eps 1e-8), for the backbone and the class centres",
     {.choices = "sgd|adamw"}},
    {"momentum", &Config::momentum, "SGD momentum (unused by adamw)",
     {.min = at_least(0), .max = below(1)}},
    {"weight_decay", &Config::weight_decay,
     "weight decay: SGD adds weight_decay x w to the gradient, AdamW shrinks w by "
     "lr x weight_decay",
     {.min = at_least(0)}},
    {"gradient_acc", &Config::gradient_acc,
     "micro-batches per optimiser step: their gradients are summed (not averaged, as "
     "train_v2.py), then one clipped step; steps, the schedule and epochs count optimiser steps",
     {.min = at_least(1)}},
    {"interclass_filtering_threshold", &Config::interclass_filtering_threshold,
     "negatives whose cosine exceeds this are set to 0 before the margin (arcface_torch's "
     "CombinedMarginLoss); 0 filters nothing",
     {.min = at_least(0), .max = below(1)}},
    {"margin_list", &Config::margin_list,
     "(m1, m2, m3): (1.0, 0.5, 0.0) is ArcFace cos(t + m2), (1.0, 0.0, 0.4) CosFace cos - m3",
     {.min = at_least(0), .length = 3}},
    {"num_classes", &Config::num_classes, "number of identities", {.min = at_least(1)}},
    {"num_image", &Config::num_image, "images per epoch", {.min = at_least(1)}},
    {"num_epoch", &Config::num_epoch, "epochs to train", {.min = at_least(1)}},
    {"warmup_epoch", &Config::warmup_epoch, "epochs of linear learning-rate warm-up",
     {.min = at_least(0)}},
    {"rec", &Config::rec,
     "training data: \"synthetic\", or a folder holding train.rec and train.idx",
     {.non_empty = true}},
    {"output", &Config::output, "folder for metrics.h5, logs and checkpoints",
     {.non_empty = true}, KeyRole::operation},
    {"seed", &Config::seed, "seed of every random stream: initial weights, class sampling, synthetic data",
     {.min = at_least(0)}},
    {"frequent", &Config::frequent, "log speed, loss and learning rate every this many steps",
     {.min = at_least(1)}, KeyRole::operation},
    {"val_targets", &Config::val_targets,
     "verification sets checked during training: names of insightface .bin files in `rec` "
     "(<rec>/<name>.bin, e.g. [\"lfw\", \"cfp_fp\", \"agedb_30\"]); [] checks none",
     {.non_empty = true}, KeyRole::operation},
    {"verbose", &Config::verbose,
     "run the verification of val_targets every this many steps, and after the last one",
     {.min = at_least(1)}, KeyRole::operation},
    // ---- ours --------------------------------------------------------------------------------
    {"method", &Config::method,
     "classifier: dp (whole on every rank), mp (split by class), pfc (split and sampled)",
     {.choices = "dp|mp|pfc"}},
    {"classifier_update", &Config::classifier_update,
     "how a step moves the class centres at sample rate < 1: sampled (the seed's partial_fc.py: "
     "only the sampled rows and their momentum) or dense (partial_fc_v2.py: one parameter, so "
     "weight decay and the optimiser's moments reach every row every step)",
     {.choices = "sampled|dense"}},
    {"margin_gradient", &Config::margin_gradient,
     "the ArcFace margin's gradient: exact (the seed's losses.py: the target's gradient carries "
     "sin(theta + m) / sin(theta)) or straight_through (today's CombinedMarginLoss, margin under "
     "no_grad); CosFace is the same either way",
     {.choices = "exact|straight_through"}},
    {"classifier_precision", &Config::classifier_precision,
     "with fp16 = true: fp16 runs the classifier's three GEMMs on f16 operands (pfc's speed "
     "choice); fp32 keeps the classifier in fp32 as both arcface_torch versions do. With fp16 = "
     "false everything is fp32",
     {.choices = "fp16|fp32"}},
    {"device", &Config::device,
     "where to compute; \"meta\" plans the run instead (pfc plan): memory, arithmetic, bound",
     {.choices = "cpu|cuda|meta"}, KeyRole::operation},
    {"plan_for", &Config::plan_for,
     "with device = \"meta\": the backend the plan is of (its allocations and operand rules)",
     {.choices = "cpu|cuda"}, KeyRole::operation},
    {"memory_check", &Config::memory_check,
     "pfc train first plans the run and refuses it (exit 2) when it needs more memory than the "
     "device or host has", {}, KeyRole::operation},
    {"classifier_storage", &Config::classifier_storage,
     "the type the class centres and their optimiser moments are stored in: f32, or f16 / bf16 "
     "(half the memory; each update rounds stochastically; AdamW's moments beside f16 centres "
     "are bf16)",
     {.choices = "f32|f16|bf16"}},
    {"layers", &Config::layers, "blocks in each of the four stages when network = \"custom\"",
     {.min = at_least(1)}},
    {"widths", &Config::widths, "channels of the four iresnet stages",
     {.min = at_least(1), .length = 4}},
    {"image_size", &Config::image_size,
     "height and width of the input images, a multiple of 16 (four stride-2 stages); 112 for "
     "the MobileFaceNets; 112 or a multiple of the 9-pixel patch for the Vision Transformers",
     {.min = at_least(16)}},
    {"embed_dim", &Config::embed_dim, "token width of the Vision Transformer of network = \"vit\"",
     {.min = at_least(1)}},
    {"depth", &Config::depth, "transformer blocks of network = \"vit\"", {.min = at_least(1)}},
    {"num_heads", &Config::num_heads,
     "attention heads of network = \"vit\"; they must divide embed_dim", {.min = at_least(1)}},
    {"mask_ratio", &Config::mask_ratio,
     "network = \"vit\": above 0, training masks 10 % of the tokens (vit.py masks 10 % "
     "whatever the value)",
     {.min = at_least(0), .max = below(1)}},
    {"drop_path_rate", &Config::drop_path_rate,
     "network = \"vit\": DropPath rate of the last block (linspace from 0 over the blocks)",
     {.min = at_least(0), .max = below(1)}},
    {"using_checkpoint", &Config::using_checkpoint,
     "network = \"vit\": blocks recompute their forward in the backward (less memory)"},
    {"scale_s", &Config::scale_s, "logit scale s", {.min = above(0)}},
    {"lr_schedule", &Config::lr_schedule,
     "step: linear warm-up from 0, then x0.1 at each of decay_epoch (the seed's train.py); "
     "polynomial: warm-up from 0, then (1 - progress)^2 to 0 (arcface_torch's older "
     "PolyScheduler); polynomial_warmup: the first step at the full rate, warm-up, then "
     "(1 - progress)^lr_power to 0 (today's train_v2.py: PolynomialLRWarmup, power 1)",
     {.choices = "step|polynomial|polynomial_warmup"}},
    {"lr_power", &Config::lr_power,
     "the power of a polynomial lr_schedule's decay; 0 takes the schedule's own (2 for "
     "polynomial, 1 for polynomial_warmup)",
     {.min = at_least(0)}},
    {"lr_scaling", &Config::lr_scaling,
     "batch/512: the run applies lr x global batch / 512 (the seed's train.py); none: lr as given "
     "(arcface_torch's train_v2.py and its configs)",
     {.choices = "batch/512|none"}},
    {"decay_epoch", &Config::decay_epoch,
     "epochs at which the step schedule divides the learning rate by 10, ascending",
     {.min = at_least(0)}},
    {"clip_grad_norm", &Config::clip_grad_norm,
     "the backbone gradient is clipped to this global L2 norm", {.min = above(0)}},
    {"steps", &Config::steps, "stop after this many steps; 0 runs every epoch",
     {.min = at_least(0)}, KeyRole::operation},
    {"synthetic_labels", &Config::synthetic_labels,
     "labels of synthetic data: constant (all 1, as the seed) or uniform over the classes",
     {.choices = "constant|uniform"}},
    {"checkpoint_every", &Config::checkpoint_every,
     "write a checkpoint every this many steps; 0: only at the end (and on a stop signal); "
     "-1: never (benchmarks)",
     {.min = at_least(-1)}, KeyRole::operation},
    {"keep_checkpoints", &Config::keep_checkpoints, "how many recent checkpoints to keep",
     {.min = at_least(1)}, KeyRole::operation},
    {"resume", &Config::resume,
     "continue from the latest checkpoint in `output`: true (there must be one), \"auto\" "
     "(when there is one, else start a new run: for jobs that may be requeued), or false",
     {}, KeyRole::operation},
    {"resume_from", &Config::resume_from,
     "start a new run in `output` from this checkpoint: a step_NNNNNNN folder, or a run's output "
     "folder (its latest checkpoint); on any number of ranks", {}, KeyRole::operation},
    {"pretrained", &Config::pretrained,
     "start a new run from this backbone, with new class centres for num_classes and a fresh "
     "optimiser, step and schedule (fine-tuning): a pfc run or checkpoint folder, a PyTorch "
     "model.pt (arcface_torch's torch.save of the backbone) or an ONNX model (torch2onnx.py's, "
     "pfc export's); \"\" starts from the network's own initialisation",
     {}, KeyRole::operation},
    {"data_workers", &Config::data_workers, "threads decoding images on each rank",
     {.min = at_least(1)}, KeyRole::operation},
    {"divergence_steps", &Config::divergence_steps,
     "stop the run as diverged (status \"diverged\", exit 1, the last good checkpoint kept) "
     "after this many consecutive steps with a non-finite loss",
     {.min = at_least(1)}, KeyRole::operation},
    {"collective_timeout_s", &Config::collective_timeout_s,
     "a collective that some rank has not joined after this many seconds ends the run, naming "
     "the ranks that did not arrive; 0 waits forever",
     {.min = at_least(0)}, KeyRole::operation},
    {"emulate_world_size", &Config::emulate_world_size,
     "when > 0, one process plays one rank of a world of this size; 0 uses the real world",
     {.min = at_least(0)}, KeyRole::operation},
    {"emulate_rank", &Config::emulate_rank, "the rank played when emulating",
     {.min = at_least(0)}, KeyRole::operation},
    {"emulate_bandwidth_gbps", &Config::emulate_bandwidth_gbps,
     "per-GPU bus bandwidth of the modelled network, GB/s", {.min = above(0)},
     KeyRole::operation},
    {"emulate_latency_us", &Config::emulate_latency_us,
     "latency of one hop of a modelled ring collective, microseconds", {.min = at_least(0)},
     KeyRole::operation},
};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string format_bound(double v) { return fmt::format("{}", v); }

}  // namespace

std::span<const ConfigKey> config_keys() { return kKeys; }

const ConfigKey* find_config_key(std::string_view name) {
  for (const ConfigKey& key : kKeys)
    if (key.name == name) return &key;
  return nullptr;
}

std::string_view nearest_config_key(std::string_view name) {
  std::string_view best;
  std::size_t best_distance = 0;
  for (const ConfigKey& key : kKeys) {
    const std::size_t d = edit_distance(name, key.name);
    if (best.empty() || d < best_distance) {
      best = key.name;
      best_distance = d;
    }
  }
  // Close enough to be a typo: a third of the name, and at least two edits.
  const std::size_t tolerance = std::max<std::size_t>(2, name.size() / 3);
  if (best_distance <= tolerance) return best;
  // Or the start of a longer name ("margin" for margin_list).
  if (name.size() >= 4)
    for (const ConfigKey& key : kKeys)
      if (key.name.starts_with(name)) return key.name;
  return {};
}

std::string describe_type(const ConfigKey& key) {
  struct Namer {
    std::string operator()(bool Config::*) const { return "a boolean"; }
    std::string operator()(std::int64_t Config::*) const { return "an integer"; }
    std::string operator()(double Config::*) const { return "a number"; }
    std::string operator()(std::string Config::*) const { return "a string"; }
    std::string operator()(std::vector<std::int64_t> Config::*) const {
      return "an array of integers";
    }
    std::string operator()(std::vector<double> Config::*) const { return "an array of numbers"; }
    std::string operator()(std::array<double, 3> Config::*) const {
      return "an array of 3 numbers";
    }
    std::string operator()(std::vector<std::string> Config::*) const {
      return "an array of strings";
    }
    std::string operator()(ResumeMode Config::*) const { return "true, false or \"auto\""; }
  };
  return std::visit(Namer{}, key.field);
}

std::string describe_range(const ConfigLimits& l) {
  if (l.min && l.max)
    return fmt::format("in {}{}, {}{}", l.min->inclusive ? '[' : '(', format_bound(l.min->value),
                       format_bound(l.max->value), l.max->inclusive ? ']' : ')');
  if (l.min) return fmt::format("{} {}", l.min->inclusive ? ">=" : ">", format_bound(l.min->value));
  if (l.max) return fmt::format("{} {}", l.max->inclusive ? "<=" : "<", format_bound(l.max->value));
  return "";
}

bool is_array_key(const ConfigKey& key) {
  return std::holds_alternative<std::vector<std::int64_t> Config::*>(key.field) ||
         std::holds_alternative<std::vector<double> Config::*>(key.field) ||
         std::holds_alternative<std::array<double, 3> Config::*>(key.field) ||
         std::holds_alternative<std::vector<std::string> Config::*>(key.field);
}

std::string describe_limits(const ConfigKey& key) {
  const ConfigLimits& l = key.limits;
  std::vector<std::string> parts;
  if (!l.choices.empty()) parts.push_back(fmt::format("one of {}", l.choices));
  if (l.non_empty) parts.push_back(is_array_key(key) ? "no empty string" : "not empty");
  if (l.length != 0) parts.push_back(fmt::format("exactly {} elements", l.length));
  const std::string range = describe_range(l);
  if (!range.empty()) parts.push_back(is_array_key(key) ? "each " + range : range);
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace pfc
