// `pfc ijb RUN_OR_CHECKPOINT ROOT --target IJBC|IJBB [--output FILE.h5]`: IJB-B or IJB-C 1:1
// template verification of a trained network, as arcface_torch's eval_ijbc.py measures it
// (eval/ijb_protocol.h: the files; data/face_align.h: the alignment; eval/ijb_templates.h: the
// pooling; eval/ijb_roc.h: the ROC and the table), on any backend and over the ranks of an
// mpiexec/srun job, which share the images. Every file and every image is checked before the
// embedding pass; the result is written under a temporary name and renamed when complete
// (io/staged_file.h).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "app/commands.h"
#include "app/inference_precision_option.h"
#include "app/rank_place.h"
#include "backend/backend.h"
#include "eval/ijb_embedding.h"
#include "eval/ijb_evaluation.h"
#include "eval/ijb_table.h"
#include "eval/image_progress.h"
#include "eval/open_backbone.h"
#include "io/staged_file.h"
#include "train/run_control.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

struct IjbOptions {
  std::string checkpoint;
  std::string root;
  std::string target = "IJBC";
  std::string output;
  std::string device = "cpu";
  std::int64_t batch_size = 64;
  int threads = 0;
  bool fp16 = false;
  std::string precision = "f32";
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// RUN/ijbc_step_0000200.h5 beside the run's metrics.h5, where `pfc report` finds it.
std::string default_output(const CheckpointInfo& checkpoint, IjbTarget target) {
  fs::path run = checkpoint.path.parent_path();
  if (run.filename() == "ckpt") run = run.parent_path();
  return (run / fmt::format("{}_step_{:07d}.h5", ijb_file_prefix(target), checkpoint.step))
      .string();
}

// pfc ijb replaces only a file it wrote itself.
void check_output(const std::string& output) {
  if (fs::is_directory(output))
    throw UsageError(fmt::format("--output '{}' is a folder; name the .h5 file to write", output));
  const fs::path parent = fs::path(output).parent_path();
  if (!parent.empty() && !fs::is_directory(parent))
    throw UsageError(fmt::format("--output '{}': folder '{}' does not exist", output,
                                 parent.string()));
  if (fs::exists(output) && !is_ijb_result(output))
    throw UsageError(fmt::format("'{}' exists and is not a result of pfc ijb; it is left as it "
                                 "is (name another --output)",
                                 output));
}

int run_ijb(const IjbOptions& options) {
  if (options.fp16 && options.device != "cuda")
    throw UsageError("--fp16 needs --device cuda (the CPU backend computes in f32)");
  const InferencePrecision precision =
      inference_precision(options.precision, options.device);
  const IjbTarget target = parse_ijb_target(options.target);
  const IjbFiles files = ijb_files(options.root, target);
  install_stop_signal_handlers();

  RankPlace place = make_rank_place(parse_backend_kind(options.device, "--device"),
                                    Config().collective_timeout_s);
  Comm& comm = *place.comm;
  // The network only runs forward: its filters stay in the convolutions' own layouts.
  place.backend->keep_prepared_filters();
  const bool leader = comm.rank() == 0;
  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) /
                                            ranks_on_this_node());
  OpenBackboneOptions open;
  open.activations = place.backend->allocation_policy().activations(options.fp16);
  const OpenedBackbone opened = open_backbone(options.checkpoint, *place.backend, open);
  // Batch-norms folded into the convolutions, which run with PReLU and sums as epilogues,
  // where the backend fuses inference (model/inference_network.h).
  opened.backbone->prepare_inference(precision);
  Backbone& backbone = *opened.backbone;
  const std::string output =
      options.output.empty() ? default_output(opened.checkpoint, target) : options.output;
  // Staged from the start (io/staged_file.h): a second pfc ijb writing the same file is refused
  // before its long pass, and an interrupt removes the temporary.
  std::optional<StagedFile> staged;
  if (leader) {
    check_output(output);
    staged.emplace(output);
  }

  // Every rank aligns images, so every rank reads the image lists; the pairs are rank 0's.
  auto start = Clock::now();
  const IjbImages images = read_ijb_images(files, backbone.image_size());
  const IjbPairs pairs = leader ? read_ijb_pairs(files, images.templates) : IjbPairs{};
  IjbImageSource source(files, images, backbone.image_size(), options.batch_size, threads);
  source.check(rank_batches(images.size(), options.batch_size, comm));
  comm.barrier();
  if (leader)
    spdlog::info("pfc ijb: {} {} images of {} templates, {} pairs ({} genuine), read and "
                 "aligned in {:.1f} s; {} (step {}), {}, {} backend{}, {} rank(s), {} "
                 "alignment threads each",
                 ijb_target_name(target), images.size(), images.templates.size(), pairs.size(),
                 pairs.genuine, seconds_since(start), opened.checkpoint.path.string(),
                 opened.checkpoint.step, backbone.describe(), place.backend->name(),
                 options.fp16 ? " fp16" : precision == InferencePrecision::bf16 ? " bf16" : "", comm.world_size(), threads);

  start = Clock::now();
  const std::int64_t emb = backbone.embedding_size();
  Tensor features;
  if (leader) features = Tensor::host({images.size(), emb}, DType::f32);
  ImageProgress progress("embedded", images.size());
  embed_ijb_images(
      backbone, source, comm, options.batch_size,
      [&](std::int64_t first, const Tensor& rows) {
        std::copy(rows.data<float>(), rows.data<float>() + rows.numel(),
                  features.data<float>() + first * emb);
      },
      [&](std::int64_t done) {
        if (leader) progress.update(done);
      });
  const double pass_seconds = seconds_since(start);
  if (!leader) return kExitOk;

  IjbResult result = evaluate_ijb(images, pairs, features);
  IjbSummary& s = result.summary;
  s.target = ijb_target_name(target);
  s.checkpoint = opened.checkpoint.path.string();
  s.step = opened.checkpoint.step;
  s.network = backbone.describe();
  result.root = options.root;
  result.image_size = backbone.image_size();
  fmt::print("{}", format_tar_table(fmt::format("{}-{}", ijb_file_prefix(target), s.target),
                                    s.tar_at_far));
  fmt::print("[{}]AUC: {:.4f} %\n", s.target, s.auc * 100);
  fmt::print("[{}]Images: {} ({} templates, {} pairs), {:.1f} s, {:.3f} ms per image and its "
             "mirror image\n",
             s.target, s.images, s.templates, s.pairs, pass_seconds,
             1e3 * pass_seconds / static_cast<double>(s.images));
  std::fflush(stdout);

  write_ijb_result(staged->temporary().string(), result);
  commit_staged_files({&*staged});
  fmt::print("wrote {}\n", output);
  return kExitOk;
}

}  // namespace

CommandRunner add_ijb_command(CLI::App& app) {
  auto options = std::make_shared<IjbOptions>();
  CLI::App* cmd = app.add_subcommand(
      "ijb", "IJB-B / IJB-C 1:1 template verification of a trained network (arcface_torch's "
             "eval_ijbc.py: 5-point alignment, flip, faceness, TAR at FAR 1e-6 ... 1e-1)");
  cmd->add_option("RUN_OR_CHECKPOINT", options->checkpoint,
                  "a run's output folder (its latest checkpoint) or a ckpt/step_NNNNNNN folder")
      ->required();
  cmd->add_option("ROOT", options->root,
                  "the IJB folder: meta/<t>_face_tid_mid.txt, meta/<t>_name_5pts_score.txt, "
                  "meta/<t>_template_pair_label.txt, loose_crop/ (t = ijbc or ijbb)")
      ->required();
  cmd->add_option("--target", options->target, "IJBC or IJBB")->capture_default_str();
  cmd->add_option("--output", options->output,
                  "the HDF5 file to write (default: RUN/<t>_step_NNNNNNN.h5 beside the run's "
                  "metrics.h5)");
  cmd->add_option("--device", options->device, "cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--batch-size", options->batch_size,
                  "images per forward pass (their mirror images double it)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--threads", options->threads,
                  "threads that decode and align images, per rank (default: the node's cores "
                  "shared by its ranks)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--fp16", options->fp16, "f16 activations (cuda); f32 otherwise");
  add_inference_precision_option(cmd, options->precision);
  return [options] { return run_ijb(*options); };
}

}  // namespace pfc
