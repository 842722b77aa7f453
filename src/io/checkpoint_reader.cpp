#include "io/checkpoint_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>
#include <sstream>

#include "core/input_file.h"
#include "io/checkpoint_layout.h"
#include "io/checkpoint_shard.h"
#include "io/checkpoint_values.h"
#include "io/hdf5.h"
#include "io/hdf5_row_datasets.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

// Adds the checkpoint to an error's message; a UsageError passes through as it is.
template <class Read>
auto naming_checkpoint(const fs::path& folder, Read&& read) {
  try {
    return read();
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format("cannot read checkpoint '{}': {}", folder.string(), e.what()));
  }
}

h5::File open_model(const fs::path& folder) {
  const fs::path path = folder / kModelFile;
  if (const std::string kind = non_file_kind(path); !kind.empty())
    throw Error(fmt::format("checkpoint file '{}' {}", path.string(), kind));
  h5::File file(path.string(), h5::Mode::read);
  const bool is_checkpoint = h5::has_attribute(file.id(), "/", "format") &&
                             h5::read_attribute_string(file.id(), "/", "format") ==
                                 kCheckpointFormat;
  PFC_CHECK(is_checkpoint, "'{}' is not a pfc checkpoint (no format attribute '{}')",
            path.string(), kCheckpointFormat);
  return file;
}

// The lines of a newline-separated list attribute, empty lines left out.
std::vector<std::string> read_list(hid_t file, const std::string& object, const char* attribute) {
  std::vector<std::string> items;
  std::istringstream lines(h5::read_attribute_string(file, object, attribute));
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) items.push_back(line);
  return items;
}

std::vector<NamedTensor> read_named(hid_t file, const std::string& group) {
  std::vector<NamedTensor> tensors;
  for (const std::string& name : read_list(file, group, "names")) {
    const std::string path = group + "/" + name;
    PFC_CHECK(h5::exists(file, path), "{} is listed but missing", path);
    tensors.push_back({name, h5::read_tensor(file, path, DType::f32)});
  }
  return tensors;
}

// The optimiser moments the checkpoint holds; one written before AdamW existed has SGD's.
std::vector<std::string> moment_names(hid_t file) {
  if (!h5::has_attribute(file, "/pfc", "moments")) return {"momentum"};
  const std::vector<std::string> names = read_list(file, "/pfc", "moments");
  PFC_CHECK(!names.empty(), "/pfc lists no optimiser moment");
  return names;
}

TrainingState read_state(hid_t file) {
  const auto integer = [&](const char* name) {
    return h5::read_attribute_int(file, "/state", name);
  };
  TrainingState state;
  state.step = integer("step");
  state.epoch = integer("epoch");
  state.data.epoch = integer("data_epoch");
  state.data.samples_in_epoch = integer("data_samples_in_epoch");
  state.loss_scale = h5::read_attribute_double(file, "/state", "loss_scale");
  state.loss_scale_clean_steps = integer("loss_scale_clean_steps");
  state.lr_step = integer("lr_step");
  state.seed = integer("seed");
  state.world_size = integer("world_size");
  state.method = h5::read_attribute_string(file, "/state", "method");
  state.sample_rate = h5::read_attribute_double(file, "/state", "sample_rate");
  state.num_classes = integer("num_classes");
  state.embedding_size = integer("embedding_size");
  state.config_toml = h5::read_attribute_string(file, "/state", "config");
  // Written before AdamW existed: SGD, stepped once per training step.
  const bool has_optimizer = h5::has_attribute(file, "/state", "optimizer");
  state.optimizer = has_optimizer ? h5::read_attribute_string(file, "/state", "optimizer") : "sgd";
  state.backbone_updates = has_optimizer ? integer("backbone_updates") : state.step;
  state.classifier_updates = has_optimizer ? integer("classifier_updates") : state.step;
  return state;
}

void check_matches_config(const fs::path& folder, const TrainingState& state,
                          const CheckpointRequest& request) {
  const auto mismatch = [&](const char* key, std::int64_t saved, std::int64_t wanted) {
    if (saved != wanted)
      throw UsageError(fmt::format(
          "checkpoint '{}' was saved with {} = {}, but the config has {} = {}; a run resumes "
          "only with the same value",
          folder.string(), key, saved, key, wanted));
  };
  mismatch("num_classes", state.num_classes, request.num_classes);
  mismatch("embedding_size", state.embedding_size, request.embedding_size);
  if (state.optimizer != request.optimizer)
    throw UsageError(fmt::format(
        "checkpoint '{}' holds the state of optimizer = \"{}\", but the config has optimizer = "
        "\"{}\"; a run resumes only with the optimiser it was saved with",
        folder.string(), state.optimizer, request.optimizer));
}

// HDF5 reads rows of a missing virtual-dataset source as fill values, silently: every shard
// that holds a row of [begin, end) is checked before any row is read.
void check_shards(hid_t model, const fs::path& folder, std::int64_t embedding_size,
                  std::int64_t begin, std::int64_t end) {
  const std::vector<std::string> moments = moment_names(model);
  const auto starts = h5::read_attribute_ints(model, "/pfc", "class_start");
  const auto counts = h5::read_attribute_ints(model, "/pfc", "num_local");
  PFC_CHECK(starts.size() == counts.size(), "/pfc lists {} class starts but {} shard sizes",
            starts.size(), counts.size());
  for (std::size_t r = 0; r < starts.size(); ++r) {
    if (counts[r] == 0 || starts[r] >= end || starts[r] + counts[r] <= begin) continue;
    const fs::path file = folder / shard_file_name(static_cast<int>(r));
    const ShardExtent extent = read_shard_extent(file, embedding_size, moments);
    PFC_CHECK(extent.class_start == starts[r] && extent.num_local == counts[r],
              "shard '{}' holds classes [{}, {}) but model.h5 maps [{}, {})", file.string(),
              extent.class_start, extent.class_start + extent.num_local, starts[r],
              starts[r] + counts[r]);
  }
}

}  // namespace

Checkpoint read_checkpoint(const fs::path& folder, const CheckpointRequest& request) {
  return naming_checkpoint(folder, [&] {
    const h5::File model = open_model(folder);
    const hid_t id = model.id();
    Checkpoint checkpoint;
    checkpoint.state = read_state(id);
    check_matches_config(folder, checkpoint.state, request);
    const std::int64_t begin = request.class_start, end = begin + request.num_local;
    PFC_CHECK(begin >= 0 && request.num_local >= 0 && end <= request.num_classes,
              "class rows [{}, {}) are outside the {} classes", begin, end,
              request.num_classes);
    check_shards(id, folder, request.embedding_size, begin, end);
    checkpoint.parameters = read_named(id, "/backbone/parameters");
    checkpoint.buffers = read_named(id, "/backbone/buffers");
    checkpoint.shard.class_start = begin;
    // The class centres and their moments in the type they were stored in (classifier_storage).
    const auto stored_rows = [&](const std::string& view) {
      return h5::read_rows(id, view, begin, request.num_local, h5::stored_float_type(id, view));
    };
    checkpoint.shard.weight = stored_rows("/pfc/weight");
    for (const std::string& name : moment_names(id)) {
      checkpoint.moments.push_back({name, read_named(id, "/backbone/" + name)});
      checkpoint.shard.moments.push_back({name, stored_rows("/pfc/" + name)});
    }
    checkpoint.has_checksums = checkpoint.parameters.empty() ||
                               h5::has_checksum(id, "/backbone/parameters/" +
                                                        checkpoint.parameters.front().name);
    check_checkpoint_values(checkpoint, "it holds an unusable value");
    return checkpoint;
  });
}

CheckpointBackbone read_checkpoint_backbone(const fs::path& folder) {
  return naming_checkpoint(folder, [&] {
    const h5::File model = open_model(folder);
    CheckpointBackbone backbone;
    backbone.state = read_state(model.id());
    backbone.parameters = read_named(model.id(), "/backbone/parameters");
    backbone.buffers = read_named(model.id(), "/backbone/buffers");
    return backbone;
  });
}

Tensor read_class_matrix(const fs::path& folder, const std::string& which) {
  return naming_checkpoint(folder, [&] {
    const h5::File model = open_model(folder);
    const std::vector<std::string> moments = moment_names(model.id());
    PFC_CHECK(which == "weight" || std::find(moments.begin(), moments.end(), which) !=
                                       moments.end(),
              "class matrix '{}': expected \"weight\" or a moment of this checkpoint's optimiser "
              "({})", which, fmt::join(moments, ", "));
    const std::int64_t classes = h5::read_attribute_int(model.id(), "/pfc", "num_classes");
    const std::int64_t embedding = h5::read_attribute_int(model.id(), "/pfc", "embedding_size");
    check_shards(model.id(), folder, embedding, 0, classes);
    return h5::read_tensor(model.id(), "/pfc/" + which, DType::f32);
  });
}

}  // namespace pfc
