#include "train/checkpoint_model_match.h"

#include <fmt/format.h>

#include <exception>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "config/config_differences.h"
#include "config/load_config.h"
#include "core/error.h"

namespace pfc {

namespace {

// The keys that decide which tensors the backbone has (make_backbone).
const std::set<std::string> kModelKeys = {"network",   "layers",    "widths", "image_size",
                                          "embedding_size", "embed_dim", "depth",  "num_heads"};

// What the model has of one kind, in the model's order.
struct Expected {
  std::string group;  // "parameter", "momentum of", "exp_avg of", "buffer"
  std::vector<std::pair<std::string, Shape>> tensors;
};

// The first problem between what the model has and what the checkpoint holds, if any.
std::optional<std::string> first_mismatch(const Expected& model,
                                          const std::vector<NamedTensor>& saved) {
  std::map<std::string, Shape> in_checkpoint;
  for (const NamedTensor& t : saved) in_checkpoint.emplace(t.name, t.value.shape());
  std::set<std::string> in_model;
  for (const auto& [name, shape] : model.tensors) {
    in_model.insert(name);
    const auto it = in_checkpoint.find(name);
    if (it == in_checkpoint.end())
      return fmt::format("the model's {} '{}' {} is not in the checkpoint", model.group, name,
                         shape_string(shape));
    if (it->second != shape)
      return fmt::format("the model's {} '{}' is {}, the checkpoint's is {}", model.group, name,
                         shape_string(shape), shape_string(it->second));
  }
  for (const NamedTensor& t : saved)
    if (!in_model.count(t.name))
      return fmt::format("the checkpoint's {} '{}' {} has no place in the model", model.group,
                         t.name, shape_string(t.value.shape()));
  return std::nullopt;
}

std::string describe_differences(const Checkpoint& checkpoint, const Config& cfg) {
  Config saved;
  try {
    saved = parse_config(checkpoint.state.config_toml, "the checkpoint's config", {});
  } catch (const std::exception& e) {
    return fmt::format("its saved config cannot be compared with this one ({})", e.what());
  }
  std::string model_keys, other_keys;
  for (const ConfigDifference& d : config_differences(saved, cfg)) {
    if (kModelKeys.count(d.key))
      model_keys += fmt::format("{}{} = {} in the checkpoint, {} now",
                                model_keys.empty() ? "" : "; ", d.key, d.before, d.after);
    else
      other_keys += (other_keys.empty() ? "" : ", ") + d.key;
  }
  if (model_keys.empty())
    model_keys = "no key that shapes the backbone differs between the two configs";
  return other_keys.empty() ? model_keys
                            : fmt::format("{} (other keys that differ: {})", model_keys,
                                          other_keys);
}

}  // namespace

void check_checkpoint_fits_model(const Checkpoint& checkpoint, const Backbone& model,
                                 const Config& cfg, const std::filesystem::path& folder) {
  Expected parameters{"parameter", {}}, trained{"", {}}, buffers{"buffer", {}};
  for (const Parameter* p : model.parameters()) {
    parameters.tensors.emplace_back(p->name, p->torch_shape);
    if (p->trainable) trained.tensors.emplace_back(p->name, p->torch_shape);
  }
  for (const Buffer* b : model.buffers()) buffers.tensors.emplace_back(b->name, b->value.shape());
  std::optional<std::string> problem = first_mismatch(parameters, checkpoint.parameters);
  // Each optimiser moment ("momentum"; "exp_avg", "exp_avg_sq") of every trained parameter.
  for (const NamedMoment& m : checkpoint.moments) {
    if (problem) break;
    trained.group = m.name + " of";
    problem = first_mismatch(trained, m.tensors);
  }
  if (!problem) problem = first_mismatch(buffers, checkpoint.buffers);
  if (!problem) return;
  throw UsageError(fmt::format(
      "checkpoint '{}' does not fit this run's backbone: {}; {}. A run continues only with the "
      "backbone it saved (resume_from starts a new run from a checkpoint of the same backbone)",
      folder.string(), *problem, describe_differences(checkpoint, cfg)));
}

}  // namespace pfc
