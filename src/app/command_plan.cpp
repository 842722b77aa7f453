// `pfc plan CONFIG [--set key=value ...] [--gpu NAME] [--steps N] [--max-classes]`: the run
// CONFIG describes (a config file as pfc train takes, or a run's metrics.h5: the config it
// recorded), planned instead of run. The same trainer steps on the meta device (backend/meta)
// for the config's cpu or cuda backend, as one emulated rank or on the job's real ranks, and
// prints what each rank would hold (pfc's tensors exact, the rest modelled) against the
// device's memory, what a checkpoint costs, the arithmetic of a step and, on a named GPU, the
// least time a step can take; it writes <output>/plan/metrics.h5, laid out as a run's metrics.h5, so `pfc report`
// reads plans like runs. A plan has a folder of its own so that `pfc plan CONFIG` then
// `pfc train CONFIG` works: the plan leaves nothing in `output` that makes it look like a run,
// and is kept beside the run it planned. A plan that does not fit says so and still exits 0.
// With --max-classes it prints instead, for each classifier storage type, the largest
// num_classes whose plan fits (plan/max_classes.h); nothing written.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "app/commands.h"
#include "app/process_context.h"
#include "app/rank_place.h"
#include "backend/meta/meta_backend.h"
#include "config/load_config.h"
#include "core/host_memory.h"
#include "io/checkpoint_layout.h"
#include "io/hdf5.h"
#include "plan/max_classes.h"
#include "plan/plan_metrics.h"
#include "plan/plan_text.h"
#include "plan/run_plan.h"
#include "train/run_description.h"

namespace pfc {

namespace {

struct PlanCommandOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string gpu = "h200";
  std::int64_t steps = 2;
  bool max_classes = false;
};

// A plan writes <output>/plan/metrics.h5: never over a run's (an output set to another run's
// plan/ folder), only over an earlier plan's.
void check_output_holds_no_run(const std::string& metrics_path) {
  if (!std::filesystem::exists(metrics_path)) return;
  std::string device;
  try {
    const h5::File file(metrics_path, h5::Mode::read);
    if (h5::has_attribute(file.id(), "/", "device"))
      device = h5::read_attribute_string(file.id(), "/", "device");
  } catch (const Error&) {
    device = "unreadable";
  }
  if (device != "meta")
    throw UsageError(fmt::format("{} belongs to a run (device \"{}\"), which a plan would "
                                 "replace; give the plan its own folder with --set output=DIR",
                                 metrics_path, device));
}

// A config file as pfc train reads it (TOML, or arcface_torch's .py), or the config a run
// recorded in its metrics.h5 (to plan it beside what it measured).
Config load_plan_config(const std::string& path, const std::vector<std::string>& overrides) {
  if (!path.ends_with(".h5")) return load_config(path, overrides);
  const h5::File file(path, h5::Mode::read);
  if (!h5::has_attribute(file.id(), "/", "config"))
    throw UsageError(fmt::format("{} records no config: not a metrics.h5 of pfc", path));
  return parse_config(h5::read_attribute_string(file.id(), "/", "config"), path, overrides);
}

int run_plan(const PlanCommandOptions& options) {
  // A plan verifies nothing (a verification's inference batches hold less than a training
  // step), so a config's val_targets, which an emulated run refuses, are set aside first.
  std::vector<std::string> overrides = {"val_targets=[]"};
  overrides.insert(overrides.end(), options.overrides.begin(), options.overrides.end());
  Config cfg = load_plan_config(options.config, overrides);
  const BackendKind plan_for =
      parse_backend_kind(cfg.device == "meta" ? cfg.plan_for : cfg.device, "plan_for");
  cfg.device = "meta";
  cfg.plan_for = std::string(backend_kind_name(plan_for));
  // A plan restores nothing and saves nothing: it is of the run as it starts.
  cfg.resume = ResumeMode::off;
  cfg.resume_from.clear();
  cfg.checkpoint_every = -1;
  const GpuSpec* gpu = plan_for == BackendKind::cuda ? &gpu_spec(options.gpu) : nullptr;
  if (options.steps < 1)
    throw UsageError(fmt::format("--steps {}: a plan takes at least one step", options.steps));
  const std::string metrics_path =
      (std::filesystem::path(cfg.output) / "plan" / kMetricsFile).string();
  check_output_holds_no_run(metrics_path);

  RankPlace place = make_run_place(cfg);
  Comm& comm = *place.comm;
  const bool leader = cfg.emulate_world_size > 0 || comm.rank() == 0;
  std::int64_t available = 0;
  if (gpu) {
    available = planned_arena_bytes(*gpu);
  } else {
    const int sharing = cfg.emulate_world_size > 0 ? 1 : ranks_on_this_node();
    available = host_memory_available().available_bytes / sharing;
  }
  auto& meta = dynamic_cast<MetaBackend&>(*place.backend);
  if (options.max_classes) {
    std::vector<MaxClasses> found;
    for (const char* storage : {"f32", "f16", "bf16"})
      found.push_back(
          largest_num_classes(cfg, storage, comm, meta, {options.steps, gpu, available}));
    if (leader) fmt::print("{}", format_max_classes(found, cfg, gpu, comm.world_size()));
    std::fflush(stdout);
    return kExitOk;
  }
  const Plan plan = make_plan(cfg, comm, meta, {options.steps, gpu, available});
  const RunInfo info = describe_run(cfg, comm, meta, process_command_line());
  if (!leader) return kExitOk;
  write_plan_metrics(metrics_path, cfg, info, plan);
  fmt::print("{}", format_plan(plan, cfg));
  std::fflush(stdout);
  spdlog::info("plan: {}", metrics_path);
  return kExitOk;
}

}  // namespace

CommandRunner add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Plan a training run without running it: memory per rank (exact + modelled), what a "
      "checkpoint costs (disk, host memory), arithmetic, step-time bound");
  cmd->add_option("config", options->config,
                  "TOML config (see input/), an arcface_torch configs/*.py, or a run's "
                  "metrics.h5 (the config it recorded)")
      ->required();
  cmd->add_option("--set", options->overrides, "override a config key: --set key=value");
  std::vector<std::string> gpus;
  for (const GpuSpec& spec : gpu_specs()) gpus.emplace_back(spec.key);
  cmd->add_option("--gpu", options->gpu, "cuda plans: the GPU whose memory and peaks are used")
      ->check(CLI::IsMember(gpus, CLI::ignore_case))
      ->capture_default_str();
  cmd->add_option("--steps", options->steps, "steps planned (the last one is reported)")
      ->capture_default_str();
  cmd->add_flag("--max-classes", options->max_classes,
                "instead of one plan: the largest num_classes that fits, for each "
                "classifier_storage (f32, f16, bf16), by bisection over plans");
  return [options] { return run_plan(*options); };
}

}  // namespace pfc
