// `pfc train CONFIG [--set key=value ...]`: one training run, under mpiexec or srun, or one
// process playing one rank of a larger job (emulate_world_size).
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <memory>

#include "app/commands.h"
#include "app/memory_preflight.h"
#include "app/process_context.h"
#include "app/rank_place.h"
#include "backend/backend.h"
#include "backend/cpu/cpu_runtime.h"
#include "backend/cpu/onednn_fused_conv2d.h"
#include "config/load_config.h"
#include "io/durable_file.h"
#include "io/output_path.h"
#include "model/make_backbone.h"
#include "train/trainer.h"
#include "train/output_guard.h"
#include "train/run_start.h"
#include "train/training_log.h"

namespace pfc {

namespace {

struct TrainOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string outcome_file;
};

// " (Slurm job 123, restart 1)": which attempt of a requeued job a log's lines belong to.
std::string slurm_attempt() {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (!job) return "";
  const char* restarts = std::getenv("SLURM_RESTART_COUNT");
  return fmt::format(" (Slurm job {}, restart {})", job, restarts ? restarts : "0");
}

int run_train(const TrainOptions& options) {
  // Written when the run ends, perhaps days later: a path that cannot take it is refused now.
  if (!options.outcome_file.empty()) check_output_path(options.outcome_file, "--outcome-file");
  Config cfg = load_config(options.config, options.overrides);
  if (cfg.device == "meta")
    throw UsageError("device = \"meta\" plans a run instead of running it: use `pfc plan "
                     "CONFIG` (pfc train needs device = \"cpu\" or \"cuda\")");
  const bool emulated = cfg.emulate_world_size > 0;
  if (emulated) {
    // One rank's shard of a world that does not exist cannot be resumed, nor make a
    // checkpoint the others' shards would complete.
    if (cfg.resume == ResumeMode::on)
      throw UsageError("resume = true cannot be combined with emulate_world_size > 0: "
                       "emulated runs write no checkpoints");
    cfg.checkpoint_every = -1;
  }
  // Before anything real is allocated (the CUDA arena, the classifier): a run that cannot fit
  // is refused with what it needs, instead of being killed by the kernel or the allocator.
  if (cfg.memory_check) check_run_fits(cfg);
  RankPlace place = make_run_place(cfg);
  Comm& comm = *place.comm;
  const bool leader = emulated || comm.rank() == 0;
  // Decided before anything is written, the training log included: where the run starts, and
  // whether its output folder may take it (every rank sees the same files and decides alike).
  const RunStart start = decide_run_start(cfg);
  check_output_folder(cfg.output, start.owns_output());
  if (leader) {
    open_training_log(cfg.output);
    for (const std::string& note : cfg.notes) spdlog::warn("{}", note);
    // Still right without the instructions (oneDNN emulates bf16, or the products widen to
    // f32), only slower than fp32.
    if (cfg.fp16 && place.backend->allocation_policy().products(true) == DType::bf16 &&
        !cpu::onednn_bf16_native())
      spdlog::warn("fp16 = true: the CPU backend multiplies in bf16, and this CPU has no "
                   "AVX512_BF16 or AMX instructions (oneDNN: {}); its convolutions run slower "
                   "than with fp16 = false",
                   cpu::onednn_isa());
    if (emulated)
      spdlog::info("pfc train: {} as rank {} of {} (emulated: {} GB/s, {} us per hop), {} "
                   "backend, network {}, method {}, {} classes{}",
                   options.config, comm.rank(), comm.world_size(), cfg.emulate_bandwidth_gbps,
                   cfg.emulate_latency_us, place.backend->name(), describe_network(cfg),
                   cfg.method, cfg.num_classes, slurm_attempt());
    else
      spdlog::info("pfc train: {} on {} rank(s), {} backend, network {}, method {}, {} classes{}",
                   options.config, comm.world_size(), place.backend->name(),
                   describe_network(cfg), cfg.method, cfg.num_classes, slurm_attempt());
  }
  const TrainerRun run = train(cfg, start, comm, *place.backend, process_command_line());
  if (leader && run.stopped_by_signal)
    spdlog::info("stopped by signal after step {}{}", run.steps_done,
                 cfg.checkpoint_every >= 0 ? "; checkpoint written" : "");
  if (leader && !options.outcome_file.empty()) {
    const bool saved = cfg.checkpoint_every >= 0;
    const char* outcome = !run.stopped_by_signal ? "done" : saved ? "stopped" : "interrupted";
    write_whole_file(options.outcome_file, fmt::format("{} {}\n", outcome, run.steps_done));
  }
  return kExitOk;
}

}  // namespace

CommandRunner add_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "Train an iresnet or MobileFaceNet with PartialFC from a TOML config or an arcface_torch "
      "configs/*.py");
  cmd->add_option("config", options->config,
                  "TOML config (see input/), or an arcface_torch config file X.py (read over "
                  "the base.py beside it, without running Python)")
      ->required();
  cmd->add_option("--set", options->overrides, "override a config key: --set key=value");
  cmd->add_option("--outcome-file", options->outcome_file,
                  "when the run ends without an error, write how to FILE: \"done STEP\" (its "
                  "last step trained), \"stopped STEP\" (a stop signal ended it earlier, after "
                  "its checkpoint) or \"interrupted STEP\" (the same with checkpoint_every = "
                  "-1: nothing to continue from); for job scripts (jobs/train.sbatch). A file is "
                  "replaced whole (where a link leads); a FIFO or device is written in place");
  return [options] { return run_train(*options); };
}

}  // namespace pfc
