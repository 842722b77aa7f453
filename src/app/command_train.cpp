// `pfc train CONFIG [--set key=value ...]`: one training run, under mpiexec or srun.
#include <spdlog/spdlog.h>

#include <memory>

#include "app/commands.h"
#include "app/process_context.h"
#include "backend/backend.h"
#include "comm/mpi_comm.h"
#include "config/load_config.h"
#include "train/trainer.h"

namespace pfc {

namespace {

struct TrainOptions {
  std::string config;
  std::vector<std::string> overrides;
};

int run_train(const TrainOptions& options) {
  const Config cfg = load_config(options.config, options.overrides);
  std::unique_ptr<Comm> comm = make_mpi_comm();
  std::unique_ptr<Backend> backend = make_backend(
      cfg.device == "cuda" ? BackendKind::cuda : BackendKind::cpu, comm->local_rank());
  if (comm->rank() == 0)
    spdlog::info("pfc train: {} on {} rank(s), {} backend, method {}, {} classes", options.config,
                 comm->world_size(), backend->name(), cfg.method, cfg.num_classes);
  const TrainerRun run = train(cfg, *comm, *backend, process_command_line());
  if (comm->rank() == 0 && run.stopped_by_signal)
    spdlog::info("stopped by signal after step {}; checkpoint written", run.steps_done);
  return kExitOk;
}

}  // namespace

CommandRunner add_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train iresnet + PartialFC from a TOML config");
  cmd->add_option("config", options->config, "TOML config (see input/)")->required();
  cmd->add_option("--set", options->overrides, "override a config key: --set key=value");
  return [options] { return run_train(*options); };
}

}  // namespace pfc
