// `pfc verify RUN_OR_CHECKPOINT FILE.bin...`: a trained network against insightface's
// verification files (lfw.bin, cfp_fp.bin, agedb_30.bin, ...) with the protocol of
// arcface_torch's eval/verification.py, printed in its words. Runs alone or on the ranks of
// an mpiexec/srun job, which share the images.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "app/batch_size_option.h"
#include "app/commands.h"
#include "app/inference_precision_option.h"
#include "app/rank_place.h"
#include "backend/backend.h"
#include "config/config.h"
#include "eval/check_verification_bins.h"
#include "eval/open_backbone.h"
#include "eval/image_progress.h"
#include "eval/verify_on_ranks.h"

namespace pfc {

namespace {

struct VerifyOptions {
  std::string checkpoint;
  std::vector<std::string> files;
  std::string device = "cpu";
  std::int64_t batch_size = kVerificationBatch;
  bool fp16 = false;
  std::string precision = "f32";
};

void print_result(const std::string& name, const VerificationResult& r, std::int64_t images,
                  double seconds) {
  fmt::print("[{}]XNorm: {:f}\n", name, r.xnorm);
  fmt::print("[{}]Accuracy: {:1.5f}+-{:1.5f}\n", name, r.accuracy_noflip,
             r.accuracy_noflip_std);
  fmt::print("[{}]Accuracy-Flip: {:1.5f}+-{:1.5f}\n", name, r.accuracy, r.accuracy_std);
  fmt::print("[{}]VAL@FAR=1e-3: {:1.5f}+-{:1.5f} (FAR {:1.5f})\n", name, r.val, r.val_std,
             r.far);
  fmt::print("[{}]Pairs: {} ({} images, {} folds), {:.2f} s, {:.3f} ms per image\n", name,
             r.pairs, images, r.folds, seconds, 1e3 * seconds / static_cast<double>(images));
  std::fflush(stdout);
}

int run_verify(const VerifyOptions& options) {
  if (options.fp16 && options.device != "cuda")
    throw UsageError("--fp16 needs --device cuda (the CPU backend computes in f32)");
  const InferencePrecision precision =
      inference_precision(options.precision, options.device);
  // Every file is read and checked before any work: a bad one is reported at once.
  std::vector<std::shared_ptr<const VerificationBin>> bins;
  for (const std::string& file : options.files)
    bins.push_back(std::make_shared<const VerificationBin>(file));

  RankPlace place = make_rank_place(parse_backend_kind(options.device, "--device"),
                                    Config().collective_timeout_s);
  Comm& comm = *place.comm;
  // The network only runs forward: its filters stay in the convolutions' own layouts.
  place.backend->keep_prepared_filters();
  const bool leader = comm.rank() == 0;
  OpenBackboneOptions open;
  open.activations = place.backend->allocation_policy().activations(options.fp16);
  const OpenedBackbone opened = open_backbone(options.checkpoint, *place.backend, open);
  // Batch-norms folded into the convolutions, which run with PReLU and sums as epilogues,
  // where the backend fuses inference (model/inference_network.h).
  opened.backbone->prepare_inference(precision);
  if (leader)
    spdlog::info("pfc verify: {} (step {}), {}, {} backend{}, {} rank(s)",
                 opened.checkpoint.path.string(), opened.checkpoint.step,
                 opened.backbone->describe(), place.backend->name(), options.fp16 ? " fp16" : precision == InferencePrecision::bf16 ? " bf16" : "",
                 comm.world_size());
  // Every image of every file decodes at the network's size before the first forward.
  check_batch_input_fits(options.batch_size, opened.backbone->image_size(), 2);
  check_verification_bins(bins, opened.backbone->image_size(), comm.rank(), comm.world_size());
  comm.barrier();
  for (const auto& bin : bins) {
    const auto start = std::chrono::steady_clock::now();
    ImageProgress line(fmt::format("verifying {}:", bin->name()), bin->images());
    VerificationResult r;
    run_with_batch_memory(options.batch_size, [&] {
      r = verify_on_ranks(*opened.backbone, bin, comm, options.batch_size,
                          [&](std::int64_t done) {
                            if (leader) line.update(done);
                          });
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (leader) print_result(bin->name(), r, bin->images(), seconds);
  }
  return kExitOk;
}

}  // namespace

CommandRunner add_verify_command(CLI::App& app) {
  auto options = std::make_shared<VerifyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "Face verification accuracy of a trained network on insightface .bin files "
                "(arcface_torch's protocol: flip, 10 folds, XNorm, VAL@FAR=1e-3)");
  cmd->add_option("RUN_OR_CHECKPOINT", options->checkpoint,
                  "a run's output folder (its latest checkpoint) or a ckpt/step_NNNNNNN folder")
      ->required();
  cmd->add_option("FILE.bin", options->files, "verification files (lfw.bin, cfp_fp.bin, ...)")
      ->required();
  cmd->add_option("--device", options->device, "cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  add_batch_size_option(*cmd, options->batch_size,
                        "images per forward pass (their mirror images double it; lower it to "
                        "use less memory, raise it on a GPU)");
  cmd->add_flag("--fp16", options->fp16, "f16 activations (cuda); f32 otherwise");
  add_inference_precision_option(cmd, options->precision);
  return [options] { return run_verify(*options); };
}

}  // namespace pfc
