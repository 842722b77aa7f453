// `pfc import MODEL RUN_DIR --config CFG [--set key=value ...]`: a backbone from elsewhere as a
// pfc run folder: RUN_DIR/ckpt/step_0000000, the checkpoint a new run of CFG with
// pretrained = MODEL starts from (train/trainer.h, write_start_checkpoint). MODEL is
// arcface_torch's model.pt, an ONNX model torch2onnx.py (or pfc export) wrote, or a pfc run.
// pfc embed, verify and export then take RUN_DIR as any run, and `resume = true` with
// output = RUN_DIR trains it. RUN_DIR must not hold a run already. The model is read and
// checked against CFG's network first, then the run's memory as pfc train checks it, before
// anything is written; a failed import removes what it made.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "app/commands.h"
#include "app/memory_preflight.h"
#include "app/rank_place.h"
#include "config/format_config_value.h"
#include "config/load_config.h"
#include "config/utf8_text.h"
#include "core/error.h"
#include "eval/pretrained_backbone.h"
#include "io/checkpoint_layout.h"
#include "model/make_backbone.h"
#include "train/output_guard.h"
#include "train/trainer.h"
#include "train/training_log.h"

namespace pfc {

namespace {

namespace fs = std::filesystem;

struct ImportOptions {
  std::string model;
  std::string run_dir;
  std::string config;
  std::vector<std::string> overrides;
};

// RUN_DIR and what in it this import makes, removed again when the import fails: a refused
// import leaves nothing behind, and never touches what was there before it.
class ImportOutput {
 public:
  explicit ImportOutput(const fs::path& run_dir) : run_dir_(fs::absolute(run_dir)) {
    // The outermost folder that does not exist yet: what create_directories will make.
    for (fs::path p = run_dir_; !p.empty() && !fs::exists(p); p = p.parent_path())
      if (p.has_relative_path()) created_ = p;
    for (const char* name : {kTrainingLogFile, "ckpt"})
      if (!fs::exists(run_dir_ / name)) made_inside_.push_back(run_dir_ / name);
  }
  void remove_what_was_made() const {
    std::error_code ec;
    if (!created_.empty()) {
      fs::remove_all(created_, ec);
      return;
    }
    for (const fs::path& p : made_inside_) fs::remove_all(p, ec);
  }

 private:
  fs::path run_dir_;
  fs::path created_;                 // empty when RUN_DIR existed
  std::vector<fs::path> made_inside_;  // otherwise: what the import adds to it
};

// The model read into the config's network and checked (every tensor's name and shape, and
// finite values) before anything large is allocated or anything written.
void check_model(const Config& cfg, const std::string& model) {
  RankPlace place = make_rank_place(BackendKind::cpu, cfg.collective_timeout_s);
  const std::unique_ptr<Backbone> backbone = make_backbone(cfg, *place.backend, DType::f32);
  load_pretrained_backbone(*backbone, model);
}

int run_import(const ImportOptions& options) {
  // Both are recorded in the run's config (TOML): checked here, to name the argument.
  check_utf8_text(fs::absolute(options.model).string(), "MODEL", kConfigIsUtf8);
  check_utf8_text(options.run_dir, "RUN_DIR", kConfigIsUtf8);
  std::vector<std::string> overrides = options.overrides;
  // Recorded in the run's config, so that it says where its backbone came from.
  overrides.push_back("pretrained=" + toml_string(fs::absolute(options.model).string()));
  overrides.push_back("output=" + toml_string(options.run_dir));
  Config cfg = load_config(options.config, overrides);
  if (cfg.emulate_world_size > 0)
    throw UsageError("pfc import writes a whole checkpoint: emulate_world_size does not apply");
  check_model(cfg, cfg.pretrained);
  // The checkpoint is the same on any device (masters are f32, the initialisation is keyed by
  // index), so it is made on the CPU; the config keeps its device for the run that follows.
  Config on_cpu = cfg;
  on_cpu.device = "cpu";
  if (cfg.memory_check) check_run_fits(on_cpu);
  RankPlace place = make_rank_place(BackendKind::cpu, cfg.collective_timeout_s);
  Comm& comm = *place.comm;
  check_output_folder(cfg.output, /*owns_output=*/false);
  const ImportOutput output(cfg.output);
  try {
    if (comm.rank() == 0) {
      open_training_log(cfg.output);
      for (const std::string& note : cfg.notes) spdlog::warn("{}", note);
      spdlog::info("pfc import: {} into {} with {} on {} rank(s): network {}, {} classes",
                   options.model, cfg.output, options.config, comm.world_size(),
                   describe_network(cfg), cfg.num_classes);
    }
    const CheckpointInfo info = write_start_checkpoint(cfg, comm, *place.backend);
    if (comm.rank() == 0)
      spdlog::info("imported: {} is the run's step 0; `pfc embed/verify/export {}` read it, and "
                   "resume = true with output = \"{}\" trains it",
                   info.path.string(), cfg.output, cfg.output);
  } catch (...) {
    if (comm.rank() == 0) output.remove_what_was_made();
    throw;
  }
  return kExitOk;
}

}  // namespace

CommandRunner add_import_command(CLI::App& app) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Make a pfc run folder (a checkpoint at step 0) from arcface_torch's model.pt, an ONNX "
      "model torch2onnx.py wrote, or a pfc run, for the network of a config");
  cmd->add_option("MODEL", options->model,
                  "a PyTorch state_dict as torch.save wrote it (arcface_torch's model.pt), an "
                  "ONNX model (either told by its bytes, whatever its name; a NaN or an "
                  "infinity in it is refused), or a pfc run or checkpoint folder")
      ->required();
  cmd->add_option("RUN_DIR", options->run_dir,
                  "the run folder to make (it must not hold a run)")
      ->required();
  cmd->add_option("--config", options->config,
                  "the config whose network the model holds, and whose run RUN_DIR becomes "
                  "(TOML, or an arcface_torch configs/*.py)")
      ->required();
  cmd->add_option("--set", options->overrides, "override a config key: --set key=value");
  return [options] { return run_import(*options); };
}

}  // namespace pfc
