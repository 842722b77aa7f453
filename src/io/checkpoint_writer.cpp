#include "io/checkpoint_writer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <set>
#include <utility>

#include "core/build_revision.h"
#include "core/fault_injection.h"
#include "core/stop_signals.h"
#include "io/checkpoint_shard.h"
#include "io/checkpoint_values.h"
#include "io/durable_file.h"
#include "io/hdf5.h"
#include "io/hdf5_row_datasets.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

// Runs this rank's part of a phase, then every rank learns whether all parts succeeded, so
// that no rank goes on to wait in the next phase for a peer that gave up.
template <class Part>
void run_phase(Comm& comm, const std::string& checkpoint, const char* what, Part&& part) {
  std::string error;
  try {
    part();
  } catch (const std::exception& e) {
    error = e.what();
  }
  const bool any_failed =
      comm.all_reduce_scalar(error.empty() ? 0.0 : 1.0, ReduceOp::max) > 0.0;
  if (!error.empty())
    throw Error(fmt::format("checkpoint {}: cannot {}: {}", checkpoint, what, error));
  if (any_failed)
    throw Error(fmt::format("checkpoint {}: cannot {}: another rank failed (see its message)",
                            checkpoint, what));
}

void check_host_f32(const Tensor& t, const std::string& what) {
  PFC_CHECK(t.defined() && t.device() == DeviceKind::cpu && t.dtype() == DType::f32,
            "{} must be a host f32 tensor, not {}", what,
            t.defined() ? t.describe() : "undefined");
}

// Class centres and their moments: f32, or stored in 16 bits (classifier_storage).
void check_host_stored(const Tensor& t, const std::string& what) {
  PFC_CHECK(t.defined() && t.device() == DeviceKind::cpu &&
                (t.dtype() == DType::f32 || is_16bit_float(t.dtype())),
            "{} must be a host f32, f16 or bf16 tensor, not {}", what,
            t.defined() ? t.describe() : "undefined");
}

void write_named(hid_t file, const std::string& group, const std::vector<NamedTensor>& tensors) {
  h5::require_group(file, group);
  std::set<std::string> seen;
  std::string names;
  for (const NamedTensor& t : tensors) {
    PFC_CHECK(!t.name.empty() && t.name.find('/') == std::string::npos &&
                  t.name.find('\n') == std::string::npos && seen.insert(t.name).second,
              "{}: tensor name '{}' is empty, repeated or holds '/' or a newline", group,
              t.name);
    check_host_f32(t.value, fmt::format("{}/{}", group, t.name));
    h5::write_tensor(file, group + "/" + t.name, t.value);
    names += t.name + "\n";
  }
  h5::write_attribute(file, group, "names", names);
}

// The moment names, checked: the shard's and the backbone's agree, and each can name an HDF5
// group beside /backbone/parameters and a dataset beside /pfc/weight.
std::vector<std::string> moment_names(const Checkpoint& checkpoint) {
  std::vector<std::string> names;
  for (const NamedTensor& m : checkpoint.shard.moments) {
    PFC_CHECK(!m.name.empty() && m.name.find_first_of("/\n") == std::string::npos &&
                  m.name != "weight" && m.name != "parameters" && m.name != "buffers" &&
                  std::find(names.begin(), names.end(), m.name) == names.end(),
              "optimiser moment name '{}' is empty, repeated, reserved or holds '/' or a newline",
              m.name);
    names.push_back(m.name);
  }
  PFC_CHECK(!names.empty(), "the checkpoint holds no optimiser moment of the class centres");
  return names;
}

void write_shard(const fs::path& path, const Checkpoint& checkpoint, int rank, int world_size) {
  const ClassShard& shard = checkpoint.shard;
  const TrainingState& state = checkpoint.state;
  moment_names(checkpoint);
  check_host_stored(shard.weight, "shard weight");
  const std::int64_t rows = shard.weight.rank() == 2 ? shard.weight.dim(0) : -1;
  PFC_CHECK(rows >= 0 && shard.weight.dim(1) == state.embedding_size,
            "shard weight {} must be [rows, embedding_size = {}]", shard.weight.describe(),
            state.embedding_size);
  for (const NamedTensor& m : shard.moments) {
    check_host_stored(m.value, "shard " + m.name);
    PFC_CHECK(m.value.shape() == shard.weight.shape(), "shard {} {} must be shaped as weight {}",
              m.name, m.value.describe(), shard.weight.describe());
  }
  PFC_CHECK(shard.class_start >= 0 && shard.class_start + rows <= state.num_classes,
            "shard rows [{}, {}) are outside the {} classes", shard.class_start,
            shard.class_start + rows, state.num_classes);
  {
    h5::File file(path.string(), h5::Mode::create_truncate);
    h5::write_tensor(file.id(), "/weight", shard.weight);
    kill_at_checkpoint_fault(injected_fault_from_environment(), rank, state.step);
    for (const NamedTensor& m : shard.moments) h5::write_tensor(file.id(), "/" + m.name, m.value);
    h5::write_attribute(file.id(), "/", "class_start", shard.class_start);
    h5::write_attribute(file.id(), "/", "num_local", rows);
    h5::write_attribute(file.id(), "/", "num_classes", state.num_classes);
    h5::write_attribute(file.id(), "/", "rank", std::int64_t{rank});
    h5::write_attribute(file.id(), "/", "world_size", std::int64_t{world_size});
    file.close();
  }
  sync_path(path);
}

void write_state(hid_t file, const TrainingState& state, int world_size) {
  const auto integer = [&](const char* name, std::int64_t value) {
    h5::write_attribute(file, "/state", name, value);
  };
  h5::require_group(file, "/state");
  integer("step", state.step);
  integer("epoch", state.epoch);
  integer("data_epoch", state.data.epoch);
  integer("data_samples_in_epoch", state.data.samples_in_epoch);
  h5::write_attribute(file, "/state", "loss_scale", state.loss_scale);
  integer("loss_scale_clean_steps", state.loss_scale_clean_steps);
  integer("lr_step", state.lr_step);
  integer("seed", state.seed);
  integer("world_size", world_size);
  h5::write_attribute(file, "/state", "method", state.method);
  h5::write_attribute(file, "/state", "sample_rate", state.sample_rate);
  integer("num_classes", state.num_classes);
  integer("embedding_size", state.embedding_size);
  h5::write_attribute(file, "/state", "config", state.config_toml);
  h5::write_attribute(file, "/state", "optimizer", state.optimizer);
  integer("backbone_updates", state.backbone_updates);
  integer("classifier_updates", state.classifier_updates);
}

// The virtual [classes, emb] datasets over the shard files, after checking that the shards
// cover every class exactly once.
void write_class_views(hid_t file, const fs::path& folder, const Checkpoint& checkpoint,
                       const std::vector<std::string>& moments, int world_size) {
  const TrainingState& state = checkpoint.state;
  std::vector<ShardExtent> shards;
  for (int r = 0; r < world_size; ++r)
    shards.push_back(
        read_shard_extent(folder / shard_file_name(r), state.embedding_size, moments));
  std::vector<ShardExtent> ordered = shards;
  std::sort(ordered.begin(), ordered.end(), [](const ShardExtent& a, const ShardExtent& b) {
    return a.class_start < b.class_start;
  });
  std::int64_t next = 0;
  for (const ShardExtent& s : ordered) {
    PFC_CHECK(s.class_start == next, "the shards do not tile the classes: class {} is {}", next,
              s.class_start > next ? "in no shard" : "in two shards");
    next += s.num_local;
  }
  PFC_CHECK(next == state.num_classes, "the shards hold {} classes, not {}", next,
            state.num_classes);

  std::vector<std::int64_t> starts, counts;
  // Each view in the type its shards store (every rank stores alike).
  std::vector<std::pair<std::string, DType>> datasets{{"weight", checkpoint.shard.weight.dtype()}};
  for (const NamedTensor& m : checkpoint.shard.moments) datasets.emplace_back(m.name, m.value.dtype());
  std::string moment_list;
  for (const std::string& name : moments) moment_list += name + "\n";
  for (const auto& [dataset, dtype] : datasets) {
    std::vector<h5::RowSource> sources;
    for (int r = 0; r < world_size; ++r)
      sources.push_back({shard_file_name(r), "/" + dataset,
                         shards[static_cast<std::size_t>(r)].class_start,
                         shards[static_cast<std::size_t>(r)].num_local});
    h5::create_virtual_rows(file, "/pfc/" + dataset, dtype, state.num_classes,
                            state.embedding_size, sources);
  }
  for (const ShardExtent& s : shards) {
    starts.push_back(s.class_start);
    counts.push_back(s.num_local);
  }
  h5::write_attribute(file, "/pfc", "num_classes", state.num_classes);
  h5::write_attribute(file, "/pfc", "embedding_size", state.embedding_size);
  h5::write_attribute(file, "/pfc", "class_start", starts);
  h5::write_attribute(file, "/pfc", "num_local", counts);
  h5::write_attribute(file, "/pfc", "moments", moment_list);
}

// Reads model.h5 back after it was closed and synced: every tensor listed with the shape it
// was written with, the state's step, the class views' extent. A file the disk could not hold
// whole fails here, before its folder gets a checkpoint's name.
void verify_model(const fs::path& path, const Checkpoint& checkpoint) {
  const h5::File file(path.string(), h5::Mode::read);
  const hid_t id = file.id();
  const auto verify_group = [&](const std::string& group, const std::vector<NamedTensor>& all) {
    std::string names;
    for (const NamedTensor& t : all) {
      const std::string dataset = group + "/" + t.name;
      PFC_CHECK(h5::exists(id, dataset) && h5::dataset_shape(id, dataset) == t.value.shape(),
                "'{}' reads back without {} {}", path.string(), dataset, t.value.describe());
      names += t.name + "\n";
    }
    PFC_CHECK(h5::read_attribute_string(id, group, "names") == names,
              "'{}' reads back with another list of {}", path.string(), group);
  };
  verify_group("/backbone/parameters", checkpoint.parameters);
  for (const NamedMoment& m : checkpoint.moments) verify_group("/backbone/" + m.name, m.tensors);
  verify_group("/backbone/buffers", checkpoint.buffers);
  const TrainingState& state = checkpoint.state;
  PFC_CHECK(h5::read_attribute_int(id, "/state", "step") == state.step,
            "'{}' reads back with another step", path.string());
  std::vector<std::string> views{"/pfc/weight"};
  for (const NamedTensor& m : checkpoint.shard.moments) views.push_back("/pfc/" + m.name);
  for (const std::string& view : views)
    PFC_CHECK(h5::dataset_shape(id, view) == Shape({state.num_classes, state.embedding_size}),
              "'{}' reads back without {} [{}, {}]", path.string(), view, state.num_classes,
              state.embedding_size);
}

void write_model(const fs::path& folder, const Checkpoint& checkpoint, int world_size) {
  const fs::path path = folder / kModelFile;
  {
    h5::File file(path.string(), h5::Mode::create_truncate);
    h5::write_attribute(file.id(), "/", "format", std::string(kCheckpointFormat));
    h5::write_attribute(file.id(), "/", "pfc_version", std::string(PFC_VERSION));
    h5::write_attribute(file.id(), "/", "git_revision", std::string(git_revision()));
    const std::vector<std::string> moments = moment_names(checkpoint);
    write_named(file.id(), "/backbone/parameters", checkpoint.parameters);
    PFC_CHECK(checkpoint.moments.size() == moments.size(),
              "the backbone has {} optimiser moments, the class centres {}",
              checkpoint.moments.size(), moments.size());
    for (std::size_t i = 0; i < moments.size(); ++i) {
      PFC_CHECK(checkpoint.moments[i].name == moments[i],
                "backbone moment {} is '{}', the class centres' '{}'", i,
                checkpoint.moments[i].name, moments[i]);
      write_named(file.id(), "/backbone/" + moments[i], checkpoint.moments[i].tensors);
    }
    write_named(file.id(), "/backbone/buffers", checkpoint.buffers);
    write_state(file.id(), checkpoint.state, world_size);
    write_class_views(file.id(), folder, checkpoint, moments, world_size);
    file.close();
  }
  sync_path(path);
  sync_path(folder);
  verify_model(path, checkpoint);
}

// The step folder `latest` names now, if it can be read.
std::optional<std::int64_t> current_latest_step(const fs::path& root) {
  try {
    const auto latest = latest_checkpoint(root);
    if (latest) return latest->step;
  } catch (const Error&) {
    // A damaged `latest` protects nothing; the new checkpoint replaces it.
  }
  return {};
}

void remove_quietly(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) spdlog::warn("cannot delete '{}': {}", path.string(), ec.message());
}

// Keeps the newest `keep` complete checkpoints up to `newest`; deletes the rest, leftover
// .tmp folders, and folders of later steps (an abandoned run's future).
void prune(const fs::path& root, std::int64_t newest, std::int64_t keep) {
  std::vector<fs::path> folders;
  for (const fs::directory_entry& entry : fs::directory_iterator(root))
    if (entry.is_directory() && entry.path().filename().string().starts_with("step_"))
      folders.push_back(entry.path());
  std::vector<std::pair<std::int64_t, fs::path>> kept;
  for (const fs::path& folder : folders) {
    const auto step = checkpoint_folder_step(folder.filename().string());
    if (!step || *step > newest)
      remove_quietly(folder);
    else
      kept.emplace_back(*step, folder);
  }
  std::sort(kept.begin(), kept.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  const auto keep_count = static_cast<std::size_t>(std::max<std::int64_t>(keep, 1));
  for (std::size_t i = keep_count; i < kept.size(); ++i) remove_quietly(kept[i].second);
}

// Before anything is written: a state that cannot be trained on (the model diverged) must not
// push a good checkpoint out of the rotation. Every rank throws UnusableCheckpoint alike.
void check_values_on_every_rank(Comm& comm, const fs::path& root, const std::string& where,
                                const Checkpoint& checkpoint) {
  const std::optional<std::int64_t> latest = current_latest_step(root);
  const std::string kept = latest ? fmt::format("`latest` stays on {}",
                                                checkpoint_folder_name(*latest))
                                  : std::string("no checkpoint is replaced");
  std::string problem;
  try {
    check_checkpoint_values(checkpoint, fmt::format("checkpoint {} is not written ({})", where,
                                                    kept));
  } catch (const UnusableCheckpoint& e) {
    problem = e.what();
  }
  const bool any = comm.all_reduce_scalar(problem.empty() ? 0.0 : 1.0, ReduceOp::max) > 0.0;
  if (!problem.empty()) throw UnusableCheckpoint(problem);
  if (any)
    throw UnusableCheckpoint(fmt::format("checkpoint {} is not written ({}): another rank's "
                                         "state holds an unusable value (see its message)",
                                         where, kept));
}

}  // namespace

CheckpointInfo write_checkpoint(Comm& comm, const fs::path& root, const Checkpoint& checkpoint,
                                std::int64_t keep_checkpoints) {
  const int rank = comm.rank();
  const int world_size = comm.world_size();
  const std::int64_t step = checkpoint.state.step;
  const std::string name = checkpoint_folder_name(step);
  const fs::path final_folder = root / name;
  const fs::path staging = root / (name + ".tmp");
  const std::string where = final_folder.string();

  check_values_on_every_rank(comm, root, where, checkpoint);
  // A signal that ends the process mid-write (core/stop_signals.h) takes the half-written
  // folder with it; once renamed, the name is free and removing it does nothing.
  const RemovedOnSignal staging_removal =
      rank == 0 ? RemovedOnSignal(staging, RemovedOnSignal::Kind::tree) : RemovedOnSignal();
  run_phase(comm, where, "prepare the folder", [&] {
    if (rank != 0) return;
    PFC_CHECK(current_latest_step(root) != step,
              "'{}' is the checkpoint `latest` names; it is not overwritten", where);
    fs::create_directories(root);
    fs::remove_all(staging);
    fs::create_directory(staging);
    sync_path(root);
  });
  try {
    run_phase(comm, where, "write this rank's class centres", [&] {
      write_shard(staging / shard_file_name(rank), checkpoint, rank, world_size);
    });
    run_phase(comm, where, "write model.h5 and make the checkpoint current", [&] {
      if (rank != 0) return;
      write_model(staging, checkpoint, world_size);
      // A folder of this step that `latest` does not name is the remains of a crash.
      if (fs::exists(final_folder)) fs::remove_all(final_folder);
      rename_durably(staging, final_folder);
      replace_file_atomically(root / "latest", name + "\n");
      prune(root, step, keep_checkpoints);
    });
  } catch (const Error&) {
    // What a full disk or a failing rank left half-written goes at once: it would only take
    // space the earlier checkpoints may need.
    if (rank == 0) remove_quietly(staging);
    throw;
  }
  return CheckpointInfo{step, final_folder};
}

}  // namespace pfc
