#include "io/golden_file.h"

#include <fmt/ranges.h>

#include <cctype>
#include <cmath>
#include <sstream>

#include "core/counter_rng.h"

namespace pfc {

Tensor golden_fill(const std::string& name, const Shape& shape, double center, double scale) {
  Tensor t = Tensor::host(shape, DType::f32);
  float* v = t.data<float>();
  const std::uint64_t h = fnv1a64(name);
  for (std::int64_t i = 0; i < t.numel(); ++i) v[i] = golden_fill_value(h, i, center, scale);
  return t;
}

namespace {

std::optional<double> optional_attribute(hid_t f, const std::string& object,
                                         const std::string& name) {
  if (!h5::has_attribute(f, object, name)) return std::nullopt;
  return h5::read_attribute_double(f, object, name);
}

// The relative error of arcface_torch's fp32 loss, stored as the loss itself.
std::optional<double> loss_error(hid_t f, const std::string& object, const std::string& name,
                                 double exact) {
  const std::optional<double> loss = optional_attribute(f, object, name);
  if (!loss) return std::nullopt;
  return std::fabs(*loss - exact) / std::fabs(exact);
}

// "input", "input2", ...: the dataset of stored batch `index`.
std::string batch_dataset(const std::string& group, const char* name, int index) {
  return group + "/" + name + (index == 0 ? "" : std::to_string(index + 1));
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// The stored batch a `batches` clause's right-hand side names: "input/labels" is 0,
// "input2/labels2" is 1, ...
int named_batch(const std::string& names, const std::string& where) {
  const std::string n = trimmed(names);
  const auto slash = n.find('/');
  PFC_CHECK(n.rfind("input", 0) == 0 && slash != std::string::npos,
            "{}: '{}' does not name a stored batch (inputN/labelsN)", where, n);
  const std::string digits = n.substr(5, slash - 5);
  PFC_CHECK(n.substr(slash + 1) == "labels" + digits,
            "{}: '{}' pairs an input with another batch's labels", where, n);
  return digits.empty() ? 0 : std::stoi(digits) - 1;
}

// The `batches` attribute, e.g. "step 1 and 3: input/labels; step 2: input2/labels2": the
// stored batch of each of `steps` steps, every step named exactly once.
std::vector<int> step_batches(const std::string& text, std::int64_t steps,
                              const std::string& where) {
  std::vector<int> batch(static_cast<std::size_t>(steps), -1);
  std::istringstream clauses(text);
  for (std::string clause; std::getline(clauses, clause, ';');) {
    const auto colon = clause.find(':');
    PFC_CHECK(colon != std::string::npos, "{}: batches clause '{}' has no ':'", where, clause);
    const int stored = named_batch(clause.substr(colon + 1), where);
    const auto assign = [&](std::int64_t step) {
      PFC_CHECK(step >= 1 && step <= steps && batch[step - 1] < 0,
                "{}: batches names step {} outside 1..{} or twice", where, step, steps);
      batch[step - 1] = stored;
    };
    std::istringstream words(clause.substr(0, colon));
    for (std::string word; words >> word;) {
      if (word == "step" || word == "steps" || word == "and" || word == ",") continue;
      if (!word.empty() && word.back() == ',') word.pop_back();
      // "odd steps: input/labels; even steps: input2/labels2" (the ten-step schedule cases)
      if (word == "odd" || word == "even") {
        for (std::int64_t step = word == "odd" ? 1 : 2; step <= steps; step += 2) assign(step);
        continue;
      }
      PFC_CHECK(!word.empty() && std::isdigit(static_cast<unsigned char>(word[0])),
                "{}: batches clause '{}' names no step number", where, clause);
      assign(std::stoi(word));
    }
  }
  for (std::int64_t s = 0; s < steps; ++s)
    PFC_CHECK(batch[s] >= 0, "{}: batches names no batch for step {}", where, s + 1);
  return batch;
}

}  // namespace

GoldenFile::GoldenFile(const std::string& path) : file_(path, h5::Mode::read) {}

std::string GoldenFile::precision() const {
  if (!h5::has_attribute(file_.id(), "/", "precision")) return "f32";
  return h5::read_attribute_string(file_.id(), "/", "precision");
}

std::vector<std::string> GoldenFile::case_names() const {
  std::vector<std::string> names;
  for (const std::string& group : h5::children(file_.id(), "/")) {
    if (!h5::has_attribute(file_.id(), group, "num_features")) continue;
    for (const std::string& name : h5::children(file_.id(), group))
      if (h5::has_attribute(file_.id(), group + "/" + name, "loss") ||
          h5::has_attribute(file_.id(), group + "/" + name, "steps"))
        names.push_back(group + "/" + name);
  }
  return names;
}

GoldenNetwork GoldenFile::network(const std::string& group) const {
  const hid_t f = file_.id();
  if (!h5::exists(f, group))
    throw UsageError(fmt::format("golden file {} has no network '{}' (its cases: {})",
                                 file_.path(), group, fmt::join(case_names(), ", ")));
  GoldenNetwork n;
  n.group = group;
  if (h5::has_attribute(f, group, "layers")) {
    n.network = "custom";
    n.layers = h5::read_attribute_ints(f, group, "layers");
  } else {
    const std::string described = h5::read_attribute_string(f, group, "network");
    n.network = described.substr(0, described.find(' '));
  }
  n.embedding_size = h5::read_attribute_int(f, group, "num_features");
  n.batch = h5::read_attribute_int(f, group, "batch");
  n.num_classes = h5::read_attribute_int(f, group, "num_classes");
  n.image_size = h5::read_attribute_int(f, group, "image_size");
  n.scale_s = h5::read_attribute_double(f, group, "scale_s");
  if (h5::has_attribute(f, group, "embed_dim")) {
    n.embed_dim = h5::read_attribute_int(f, group, "embed_dim");
    n.depth = h5::read_attribute_int(f, group, "depth");
    n.num_heads = h5::read_attribute_int(f, group, "num_heads");
    n.mask_ratio = h5::read_attribute_double(f, group, "mask_ratio");
    n.drop_path_rate = h5::read_attribute_double(f, group, "drop_path_rate");
  }
  return n;
}

GoldenCase GoldenFile::golden_case(const std::string& group, const std::string& name) const {
  const hid_t f = file_.id();
  const std::string path = group + "/" + name;
  if (!h5::exists(f, path))
    throw UsageError(fmt::format("golden file {} has no case '{}' (its cases: {})", file_.path(),
                                 path, fmt::join(case_names(), ", ")));
  GoldenCase c;
  c.name = name;
  c.m1 = h5::read_attribute_double(f, path, "m1");
  c.m2 = h5::read_attribute_double(f, path, "m2");
  c.m3 = h5::read_attribute_double(f, path, "m3");
  c.sample_rate = h5::read_attribute_double(f, path, "sample_rate");
  if (h5::has_attribute(f, path, "loss")) {
    c.loss = h5::read_attribute_double(f, path, "loss");
    c.torch_loss.cpu = loss_error(f, path, "torch_cpu_fp32_loss", c.loss);
    c.torch_loss.gpu = loss_error(f, path, "torch_gpu_fp32_loss", c.loss);
  }
  if (h5::has_attribute(f, path, "interclass_filtering_threshold"))
    c.interclass_filtering_threshold =
        h5::read_attribute_double(f, path, "interclass_filtering_threshold");
  if (h5::has_attribute(f, path, "classifier_update"))
    c.classifier_update = h5::read_attribute_string(f, path, "classifier_update");
  if (h5::has_attribute(f, path, "margin_gradient"))
    c.margin_gradient = h5::read_attribute_string(f, path, "margin_gradient");
  return c;
}

std::optional<GoldenVitDraws> GoldenFile::vit_draws(const std::string& group,
                                                    const std::string& name) const {
  const std::string path = group + "/" + name + "/";
  if (!has(path + "mask_noise")) return std::nullopt;
  const Tensor noise = h5::read_tensor(file_.id(), path + "mask_noise", DType::f64);
  const Tensor keep = h5::read_tensor(file_.id(), path + "drop_path_keep", DType::i64);
  GoldenVitDraws d;
  d.mask_noise.assign(noise.data<double>(), noise.data<double>() + noise.numel());
  for (std::int64_t i = 0; i < keep.numel(); ++i)
    d.drop_path_keep.push_back(keep.data<std::int64_t>()[i] != 0);
  return d;
}

std::optional<GoldenTraining> GoldenFile::training(const std::string& group,
                                                   const std::string& name) const {
  const hid_t f = file_.id();
  const std::string path = group + "/" + name;
  if (!h5::has_attribute(f, path, "steps")) return std::nullopt;
  const auto number = [&](const char* attribute) {
    return h5::read_attribute_double(f, path, attribute);
  };
  GoldenTraining t;
  t.optimizer = h5::read_attribute_string(f, path, "optimizer");
  t.lr = number("lr");
  t.weight_decay = number("weight_decay");
  t.clip_grad_norm = number("clip_grad_norm");
  t.steps = h5::read_attribute_int(f, path, "steps");
  t.gradient_acc = h5::read_attribute_int(f, path, "gradient_acc");
  if (t.optimizer == "adamw") {
    t.beta1 = number("beta1");
    t.beta2 = number("beta2");
    t.eps = number("eps");
  } else {
    t.momentum = number("momentum");
  }
  PFC_CHECK(t.steps >= 1 && t.gradient_acc >= 1, "{}: {} steps of {} micro-batches", path,
            t.steps, t.gradient_acc);
  if (h5::has_attribute(f, path, "batches")) {
    PFC_CHECK(t.gradient_acc == 1, "{}: a batch per step needs gradient_acc 1, not {}", path,
              t.gradient_acc);
    t.step_batch = step_batches(h5::read_attribute_string(f, path, "batches"), t.steps, path);
  }
  for (std::int64_t s = 1; h5::exists(f, fmt::format("{}/sampled_index_step{}", path, s)); ++s) {
    const Tensor index =
        h5::read_tensor(f, fmt::format("{}/sampled_index_step{}", path, s), DType::i64);
    t.sampled_index.emplace_back(index.data<std::int64_t>(),
                                 index.data<std::int64_t>() + index.numel());
  }
  if (h5::has_attribute(f, path, "lr_schedule")) {
    t.lr_schedule = h5::read_attribute_string(f, path, "lr_schedule");
    t.lr_power = number("lr_power");
    t.warmup_steps = number("warmup_steps");
    t.total_steps = h5::read_attribute_int(f, path, "total_steps");
  }
  if (h5::exists(f, path + "/lrs")) {
    const Tensor lrs = h5::read_tensor(f, path + "/lrs", DType::f64);
    t.lrs.assign(lrs.data<double>(), lrs.data<double>() + lrs.numel());
  }
  PFC_CHECK(t.sampled_index.empty() ||
                static_cast<std::int64_t>(t.sampled_index.size()) == t.steps,
            "{}: {} sampled_index_stepN datasets for {} steps", path, t.sampled_index.size(),
            t.steps);
  return t;
}

std::vector<std::string> GoldenFile::parameter_names(const std::string& group) const {
  return h5::children(file_.id(), group + "/params");
}

Tensor GoldenFile::parameter(const std::string& group, const std::string& name) const {
  const hid_t f = file_.id();
  const std::string path = group + "/params/" + name;
  const std::vector<std::int64_t> shape = h5::read_attribute_ints(f, path, "shape");
  return golden_fill(name, Shape(shape.begin(), shape.end()),
                     h5::read_attribute_double(f, path, "center"),
                     h5::read_attribute_double(f, path, "scale"));
}

Tensor GoldenFile::class_centres(const GoldenNetwork& network) const {
  return golden_fill("pfc.weight", {network.num_classes, network.embedding_size}, 0.0, 0.01);
}

Tensor GoldenFile::input(const std::string& group, int index) const {
  return h5::read_tensor(file_.id(), batch_dataset(group, "input", index), DType::f32);
}

Tensor GoldenFile::labels(const std::string& group, int index) const {
  return h5::read_tensor(file_.id(), batch_dataset(group, "labels", index), DType::i64);
}

std::optional<GoldenReference> GoldenFile::reference(const std::string& group,
                                                     const std::string& case_name,
                                                     const std::string& path) const {
  const hid_t f = file_.id();
  const std::string full = group + "/" + case_name + "/" + path;
  const std::string sampled = full + ".sampled";
  GoldenReference ref;
  std::string found;
  if (h5::exists(f, full)) {
    found = full;
  } else if (h5::exists(f, sampled)) {
    found = sampled;
    ref.stride = h5::read_attribute_int(f, sampled, "stride");
  } else {
    return std::nullopt;
  }
  ref.values = h5::read_tensor(f, found, DType::f64);
  if (h5::has_attribute(f, found, "l2")) ref.l2 = h5::read_attribute_double(f, found, "l2");
  ref.torch.cpu = optional_attribute(f, found, "torch_cpu_fp32_rel_err");
  ref.torch.gpu = optional_attribute(f, found, "torch_gpu_fp32_rel_err");
  return ref;
}

}  // namespace pfc
