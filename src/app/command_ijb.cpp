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

#include "app/batch_size_option.h"
#include "app/commands.h"
#include "app/inference_precision_option.h"
#include "app/rank_place.h"
#include "app/thread_layout.h"
#include "backend/backend.h"
#include "config/utf8_text.h"
#include "core/stop_signals.h"
#include "eval/ijb_embedding.h"
#include "eval/ijb_evaluation.h"
#include "eval/ijb_table.h"
#include "eval/ijb_templates.h"
#include "eval/image_progress.h"
#include "eval/open_backbone.h"
#include "io/staged_file.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

// How long a stop asked by a signal may take: one batch of images (see run_ijb).
constexpr int kStopGraceSeconds = 30;

struct IjbOptions {
  std::string checkpoint;
  std::string root;
  std::string target = "IJBC";
  std::string output;
  std::string device = "cpu";
  std::int64_t batch_size = 64;
  int threads = 0;
  bool fp16 = false;
  bool images_outside_root = false;
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

// A template's feature is its images' features times their faceness scores: with every score
// 0 every pair scores 0, and the ROC of equal scores says nothing (AUC 50 %).
void check_template_weights(const IjbImages& images, const IjbFiles& files, bool leader) {
  const std::int64_t weightless = weightless_templates(images);
  const auto templates = static_cast<std::int64_t>(images.templates.size());
  if (weightless == templates)
    throw UsageError(fmt::format("every faceness_score in '{}' is 0: no template holds any "
                                 "weight, so every pair would score 0 and the evaluation would "
                                 "say nothing (the last field of each line is the face "
                                 "detector's score, a weight above 0)",
                                 files.name_5pts_score));
  if (weightless > 0 && leader)
    spdlog::warn("{} of {} templates hold no weight (every faceness_score of their images in "
                 "'{}' is 0): every pair with one of them scores 0",
                 weightless, templates, files.name_5pts_score);
}

int run_ijb(const IjbOptions& options) {
  if (options.fp16 && options.device != "cuda")
    throw UsageError("--fp16 needs --device cuda (the CPU backend computes in f32)");
  if (options.threads > thread_limit())
    throw UsageError(fmt::format("--threads {} is more threads than this node can run: at most {} "
                                 "({} per CPU)",
                                 options.threads, thread_limit(), kThreadsPerCpu));
  // Recorded in the result's attributes (/checkpoint, /root).
  check_utf8_text(options.checkpoint, "RUN_OR_CHECKPOINT", kRecordedAsUtf8);
  check_utf8_text(options.root, "ROOT", kRecordedAsUtf8);
  const InferencePrecision precision =
      inference_precision(options.precision, options.device);
  const IjbTarget target = parse_ijb_target(options.target);
  const IjbFiles files = ijb_files(options.root, target);
  // A stop is taken between batches, seconds apart; a process blocked elsewhere (a read that
  // never returns) ends once the grace period has passed (core/stop_signals.h).
  stop_at_safe_points(kStopGraceSeconds);

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
  check_batch_input_fits(options.batch_size, backbone.image_size(), 2);
  const IjbImages images =
      read_ijb_images(files, backbone.image_size(), options.images_outside_root);
  check_template_weights(images, files, leader);
  const IjbPairs pairs = leader ? read_ijb_pairs(files, images.templates) : IjbPairs{};
  IjbImageSource source(files, images, backbone.image_size(), options.batch_size, threads);
  run_with_batch_memory(options.batch_size, [&] {
    source.check(rank_batches(images.size(), options.batch_size, comm));
  });
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
  run_with_batch_memory(options.batch_size, [&] {
    embed_ijb_images(
        backbone, source, comm, options.batch_size,
        [&](std::int64_t first, const Tensor& rows) {
          std::copy(rows.data<float>(), rows.data<float>() + rows.numel(),
                    features.data<float>() + first * emb);
        },
        [&](std::int64_t done) {
          if (leader) progress.update(done);
        });
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
  add_batch_size_option(*cmd, options->batch_size,
                        "images per forward pass (their mirror images double it)");
  cmd->add_option("--threads", options->threads,
                  "threads that decode and align images, per rank (default: the node's cores "
                  "shared by its ranks)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--fp16", options->fp16, "f16 activations (cuda); f32 otherwise");
  cmd->add_flag("--images-outside-root", options->images_outside_root,
                "read image names that lead outside ROOT (absolute paths elsewhere, '../'); "
                "refused by default");
  add_inference_precision_option(cmd, options->precision);
  return [options] { return run_ijb(*options); };
}

}  // namespace pfc
