// Reads the golden files written by arcface_torch (tests/golden/README.md): a group per
// network (`tiny`, `r50`; `mbf` in the parity file) with its parameters given by the counter
// fill rule, inputs, labels, and a subgroup per case with the reference outputs and gradients.
// Values are read as f64: the reference file is arcface_torch in float64, with beside each
// value how far arcface_torch's own fp32 lands from it; the older fp32 file reads the same way,
// without.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/hdf5.h"

namespace pfc {

struct GoldenNetwork {
  std::string group;                  // "tiny"
  // The network as pfc's `network` key names it: "custom" (an iresnet of `layers`) for a group
  // that gives its `layers`, else the first word of its `network` attribute ("mbf" of
  // "mbf (arcface_torch get_mbf: ...)").
  std::string network;
  std::vector<std::int64_t> layers;   // [2, 2, 2, 1]; empty for a MobileFaceNet
  std::int64_t embedding_size = 0;
  std::int64_t batch = 0;
  std::int64_t num_classes = 0;
  std::int64_t image_size = 0;
  double scale_s = 64.0;
  // A Vision Transformer's group (it has `embed_dim`): its dimensions; embed_dim 0 otherwise.
  std::int64_t embed_dim = 0, depth = 0, num_heads = 0;
  double mask_ratio = 0, drop_path_rate = 0;
};

// The random draws a Vision Transformer's training case recorded (`mask_noise` [batch, tokens]
// f64, `drop_path_keep` [depth, 2, batch] u8), flattened in that order.
struct GoldenVitDraws {
  std::vector<double> mask_noise;
  std::vector<std::uint8_t> drop_path_keep;
};

// How far arcface_torch's own fp32 run lands from a reference value (L2 of the difference over
// L2 of the value; for the loss, the absolute difference over the loss), on the CPU and on the
// H200 (`torch_cpu_fp32_rel_err`, `torch_gpu_fp32_rel_err`). Absent in the fp32 file.
struct TorchFp32Error {
  std::optional<double> cpu, gpu;
};

struct GoldenCase {
  std::string name;                   // "arcface_sr1"
  double m1 = 1, m2 = 0.5, m3 = 0, sample_rate = 1;
  double loss = 0;                    // 0 in the training cases, which store `losses`
  TorchFp32Error torch_loss;          // from torch_cpu_fp32_loss and torch_gpu_fp32_loss
  double interclass_filtering_threshold = 0;
  // The arcface_torch version the case was written by (attributes `classifier_update`,
  // `margin_gradient`); absent, today's (every file before the seed's is train_v2.py's).
  std::string classifier_update = "dense";
  std::string margin_gradient = "straight_through";
};

// The optimiser loop of a training case (the parity file's sgd_2steps, adamw_2steps, sgd_acc2;
// the several-step files' cases): `steps` optimiser steps of `gradient_acc` micro-batches
// each, at a constant rate or on a schedule.
struct GoldenTraining {
  std::string optimizer;              // "sgd" | "adamw"
  double lr = 0;                      // as applied
  double momentum = 0;                // sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adamw
  double weight_decay = 0;
  double clip_grad_norm = 0;
  std::int64_t steps = 0;
  std::int64_t gradient_acc = 1;
  // The stored batch (0: input/labels, 1: input2/labels2, ...) each step trains on, from the
  // case's `batches` attribute ("step 1 and 3: input/labels; step 2: input2/labels2"); empty
  // when every step trains on batches 0 .. gradient_acc - 1 (its micro-batches).
  std::vector<int> step_batch;
  // The sorted global classes each step sampled (`sampled_index_step1`, ...), for the sampler
  // to take instead of drawing; empty when the case stores none.
  std::vector<std::vector<std::int64_t>> sampled_index;
  // The learning-rate schedule over the steps (attributes `lr_schedule`, `lr_power`,
  // `warmup_steps`, `total_steps`; lr is then its base rate) and the rate each step applied
  // (`lrs`): empty, and lr constant, when the case gives none.
  std::string lr_schedule;            // "PolynomialLRWarmup"
  double lr_power = 1;
  double warmup_steps = 0;
  std::int64_t total_steps = 0;
  std::vector<double> lrs;
};

// A reference gradient or statistic: either the whole tensor or every `stride`-th element of
// it (flattened PyTorch layout), with the L2 norm of the whole tensor.
struct GoldenReference {
  Tensor values;                      // f64, host
  std::int64_t stride = 1;            // 1: values is the whole tensor
  double l2 = 0;                      // 0 when the file gives none
  TorchFp32Error torch;
};

class GoldenFile {
 public:
  explicit GoldenFile(const std::string& path);

  // The root attribute `precision`: "f64" for the reference file, "f32" when absent.
  std::string precision() const;

  // A network or case the file does not hold is a UsageError naming the cases it does.
  GoldenNetwork network(const std::string& group) const;
  GoldenCase golden_case(const std::string& group, const std::string& name) const;
  // Every case the file holds, as GROUP/CASE ("tiny/arcface_sr1", ...).
  std::vector<std::string> case_names() const;
  // The draws of a Vision Transformer's masked case (one that stores `mask_noise`).
  std::optional<GoldenVitDraws> vit_draws(const std::string& group, const std::string& name) const;
  // The case's optimiser loop, when it is a training case (it has a `steps` attribute).
  std::optional<GoldenTraining> training(const std::string& group, const std::string& name) const;
  // Names of the trained parameters the file lists for a network.
  std::vector<std::string> parameter_names(const std::string& group) const;
  // A parameter's values by the fill rule, in PyTorch layout, as a host f32 tensor (the
  // problems are posed in f32 values; the f64 file solves them exactly).
  Tensor parameter(const std::string& group, const std::string& name) const;
  // The class centres [num_classes, emb] by the fill rule.
  Tensor class_centres(const GoldenNetwork& network) const;
  // Stored batch `index`: input and labels (0), input2 and labels2 (1), ...
  Tensor input(const std::string& group, int index = 0) const;   // [batch, 3, s, s] f32 NCHW
  Tensor labels(const std::string& group, int index = 0) const;  // [batch] i64

  // `path` is relative to the case group, e.g. "grads/conv1.weight", "embeddings".
  std::optional<GoldenReference> reference(const std::string& group, const std::string& case_name,
                                           const std::string& path) const;
  bool has(const std::string& path) const { return h5::exists(file_.id(), path); }
  std::vector<std::string> list(const std::string& path) const {
    return h5::children(file_.id(), path);
  }
  const std::string& path() const { return file_.path(); }
  hid_t file_id() const { return file_.id(); }

 private:
  h5::File file_;
};

// The counter fill rule (golden README): values of tensor `name` with `center` and `scale`.
Tensor golden_fill(const std::string& name, const Shape& shape, double center, double scale);

}  // namespace pfc
