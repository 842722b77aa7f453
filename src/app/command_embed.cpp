// `pfc embed RUN_OR_CHECKPOINT INPUT... --output emb.h5 [--flip]`: the embeddings of images
// through a trained network in inference mode, into an HDF5 file:
//   /embeddings       [n, emb] f32, unnormalised, in input order
//   /embeddings_flip  [n, emb] f32, of the left-right mirror images (with --flip)
//   /names            [n] strings: the image files (file inputs)
//   /keys, /labels    [n] i64: RecordIO keys and identity labels (a dataset folder)
//   /issame           [n / 2] u8: the pair labels (a verification .bin; pair p = rows 2p, 2p+1)
//   attributes of /: checkpoint, step, network, input, flip, image_size, embedding_size
// INPUT is one .bin file, one dataset folder (train.rec + train.idx), or image files and
// folders of them. Under mpiexec/srun the ranks share the images, in batches, and rank 0
// writes the file. It is written under a temporary name and renamed when complete
// (io/staged_file.h), so an earlier one is replaced only by a whole one; an output that is one
// of the command's inputs (io/output_path.h) is refused before anything is read.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>

#include "app/batch_size_option.h"
#include "app/commands.h"
#include "app/inference_precision_option.h"
#include "app/rank_place.h"
#include "backend/backend.h"
#include "config/config.h"
#include "config/utf8_text.h"
#include "eval/embed_on_ranks.h"
#include "eval/open_backbone.h"
#include "eval/image_progress.h"
#include "io/checkpoint_layout.h"
#include "io/hdf5.h"
#include "io/hdf5_row_datasets.h"
#include "io/output_path.h"
#include "io/staged_file.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

struct EmbedOptions {
  std::string checkpoint;
  std::vector<std::string> inputs;
  std::string output;
  bool flip = false;
  std::string device = "cpu";
  std::int64_t batch_size = 32;
  bool fp16 = false;
  std::string precision = "f32";
};

enum class InputKind { bin, dataset, files };

// What the output must not be: the inputs, and the run the checkpoint belongs to (its
// checkpoints, metrics.h5, training.log).
std::vector<fs::path> protected_inputs(const EmbedOptions& options) {
  std::vector<fs::path> inputs(options.inputs.begin(), options.inputs.end());
  for (fs::path& file : run_files_of(options.checkpoint)) inputs.push_back(std::move(file));
  return inputs;
}

InputKind input_kind(const std::vector<std::string>& inputs) {
  const bool one = inputs.size() == 1;
  if (one && fs::path(inputs[0]).extension() == ".bin") return InputKind::bin;
  if (one && fs::is_directory(inputs[0]) && fs::exists(fs::path(inputs[0]) / "train.rec"))
    return InputKind::dataset;
  for (const std::string& input : inputs)
    if (fs::path(input).extension() == ".bin")
      throw UsageError(fmt::format("'{}': a .bin file is embedded on its own, not with other "
                                   "inputs",
                                   input));
  return InputKind::files;
}

int run_embed(const EmbedOptions& options) {
  if (options.fp16 && options.device != "cuda")
    throw UsageError("--fp16 needs --device cuda (the CPU backend computes in f32)");
  const InferencePrecision precision =
      inference_precision(options.precision, options.device);
  check_output_path(options.output, "--output", protected_inputs(options));
  // Recorded in the file's attributes (/checkpoint, /input).
  check_utf8_text(options.checkpoint, "RUN_OR_CHECKPOINT", kRecordedAsUtf8);
  for (const std::string& input : options.inputs)
    check_utf8_text(input, "INPUT", kRecordedAsUtf8);

  const InputKind kind = input_kind(options.inputs);
  // The ranks of an mpiexec/srun job share the images; rank 0 writes the file.
  RankPlace place = make_rank_place(parse_backend_kind(options.device, "--device"),
                                    Config().collective_timeout_s);
  Comm& comm = *place.comm;
  const bool leader = comm.rank() == 0;
  std::unique_ptr<Backend>& backend = place.backend;
  // The network only runs forward: its filters stay in the convolutions' own layouts.
  backend->keep_prepared_filters();
  OpenBackboneOptions open;
  open.activations = backend->allocation_policy().activations(options.fp16);
  const OpenedBackbone opened = open_backbone(options.checkpoint, *backend, open);
  // Batch-norms folded into the convolutions, which run with PReLU and sums as epilogues,
  // where the backend fuses inference (model/inference_network.h).
  opened.backbone->prepare_inference(precision);
  Backbone& backbone = *opened.backbone;
  const std::int64_t s = backbone.image_size();
  check_batch_input_fits(options.batch_size, s, options.flip ? 2 : 1);

  std::shared_ptr<const VerificationBin> bin;
  std::unique_ptr<ImageSource> source;
  RecordImageSource* records = nullptr;
  FileImageSource* files = nullptr;
  switch (kind) {
    case InputKind::bin:
      bin = std::make_shared<const VerificationBin>(options.inputs[0]);
      source = std::make_unique<BinImageSource>(bin, s);
      break;
    case InputKind::dataset:
      source = std::make_unique<RecordImageSource>(options.inputs[0], s);
      records = static_cast<RecordImageSource*>(source.get());
      break;
    case InputKind::files:
      source = std::make_unique<FileImageSource>(options.inputs, s);
      files = static_cast<FileImageSource*>(source.get());
      break;
  }
  const std::int64_t n = source->size();
  if (n == 0) throw UsageError(fmt::format("{} holds no images", fmt::join(options.inputs, " ")));
  // Recorded in /names: a name found in a folder is checked before the pass, not after it.
  if (files)
    for (std::int64_t i = 0; i < n; ++i) check_utf8_text(files->path(i), "image", kRecordedAsUtf8);
  if (leader)
    spdlog::info("pfc embed: {} images through {} (step {}), {}, {} backend, {} rank(s)", n,
                 opened.checkpoint.path.string(), opened.checkpoint.step, backbone.describe(),
                 backend->name(), comm.world_size());
  const ImageTag tag = [&](std::int64_t i) { return records ? records->label(i) : 0; };
  if (!leader) {
    run_with_batch_memory(options.batch_size, [&] {
      embed_on_ranks(backbone, *source, options.batch_size, options.flip, comm, tag, {});
    });
    return kExitOk;
  }

  StagedFile staged(options.output);
  {
    h5::File file(staged.temporary().string(), h5::Mode::create_truncate);
    const hid_t id = file.id();
    const std::int64_t emb = backbone.embedding_size();
    h5::create_appendable(id, "/embeddings", DType::f32, emb);
    if (options.flip) h5::create_appendable(id, "/embeddings_flip", DType::f32, emb);
    if (records) {
      h5::create_appendable(id, "/keys", DType::i64, 0);
      h5::create_appendable(id, "/labels", DType::i64, 0);
    }
    ImageProgress progress("embedded", n);
    const auto write_batch = [&](const EmbeddedBatch& b) {
      const ImageRange& r = b.range;
      h5::append_rows(id, "/embeddings", b.embeddings);
      if (options.flip) h5::append_rows(id, "/embeddings_flip", b.mirrored);
      if (records) {
        Tensor keys = Tensor::host({r.size()}, DType::i64);
        Tensor labels = Tensor::host({r.size()}, DType::i64);
        for (std::int64_t i = 0; i < r.size(); ++i) {
          keys.data<std::int64_t>()[i] = records->key(r.begin + i);
          labels.data<std::int64_t>()[i] = b.tags[i];
        }
        h5::append_rows(id, "/keys", keys);
        h5::append_rows(id, "/labels", labels);
      }
      progress.update(r.end);
    };
    run_with_batch_memory(options.batch_size, [&] {
      embed_on_ranks(backbone, *source, options.batch_size, options.flip, comm, tag,
                     write_batch);
    });
    if (files) {
      std::vector<std::string> names;
      for (std::int64_t i = 0; i < n; ++i) names.push_back(files->path(i));
      h5::write_strings(id, "/names", names);
    }
    if (bin) {
      Tensor issame = Tensor::host({bin->pairs()}, DType::i64);
      for (std::int64_t p = 0; p < bin->pairs(); ++p)
        issame.data<std::int64_t>()[p] = bin->issame()[static_cast<std::size_t>(p)] ? 1 : 0;
      h5::write_tensor(id, "/issame", issame);
    }
    h5::write_attribute(id, "/", "checkpoint", opened.checkpoint.path.string());
    h5::write_attribute(id, "/", "step", opened.checkpoint.step);
    h5::write_attribute(id, "/", "network", backbone.describe());
    h5::write_attribute(id, "/", "input", fmt::format("{}", fmt::join(options.inputs, " ")));
    h5::write_attribute(id, "/", "flip", std::int64_t{options.flip ? 1 : 0});
    h5::write_attribute(id, "/", "image_size", s);
    h5::write_attribute(id, "/", "embedding_size", emb);
    h5::write_attribute(id, "/", "pfc_version", std::string(PFC_VERSION));
    file.close();
  }
  commit_staged_files({&staged});
  fmt::print("wrote {} embeddings of {} values to {}\n", n, backbone.embedding_size(),
             options.output);
  return kExitOk;
}

}  // namespace

CommandRunner add_embed_command(CLI::App& app) {
  auto options = std::make_shared<EmbedOptions>();
  CLI::App* cmd = app.add_subcommand(
      "embed", "Embeddings of images through a trained network (inference mode) into HDF5");
  cmd->add_option("RUN_OR_CHECKPOINT", options->checkpoint,
                  "a run's output folder (its latest checkpoint) or a ckpt/step_NNNNNNN folder")
      ->required();
  cmd->add_option("INPUT", options->inputs,
                  "a verification .bin, a dataset folder (train.rec, train.idx), or JPEG files "
                  "and folders of them (searched recursively)")
      ->required();
  cmd->add_option("--output", options->output, "the HDF5 file to write")->required();
  cmd->add_flag("--flip", options->flip,
                "also embed each image's left-right mirror image (/embeddings_flip)");
  cmd->add_option("--device", options->device, "cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  add_batch_size_option(*cmd, options->batch_size,
                        "images per forward pass (lower it to use less memory)");
  cmd->add_flag("--fp16", options->fp16, "f16 activations (cuda); f32 otherwise");
  add_inference_precision_option(cmd, options->precision);
  return [options] { return run_embed(*options); };
}

}  // namespace pfc
