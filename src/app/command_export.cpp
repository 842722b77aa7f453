// `pfc export RUN_OR_CHECKPOINT model.onnx`: a trained backbone in inference mode as an ONNX
// model, as insightface's torch2onnx.py makes it (export/onnx_export.h): input `data`
// [N, 3, s, s] float32 NCHW, RGB, (pixel / 255 - 0.5) / 0.5, N dynamic; output `embedding`
// [N, embedding_size], not normalised. Any earlier file of that name is replaced only by a
// complete, checked model.
#include <fmt/format.h>
#include <mpi.h>

#include <filesystem>
#include <memory>

#include "app/commands.h"
#include "backend/backend.h"
#include "config/utf8_text.h"
#include "core/build_revision.h"
#include "core/error.h"
#include "eval/open_backbone.h"
#include "export/onnx_export.h"
#include "io/checkpoint_layout.h"
#include "io/output_path.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

struct ExportOptions {
  std::string checkpoint;
  std::string output;
};

int run_export(const ExportOptions& options) {
  int world_size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size != 1)
    throw UsageError(fmt::format("pfc export runs as a single process, not under {} ranks",
                                 world_size));
  // Recorded in the model's metadata (checkpoint), a protobuf string: UTF-8.
  check_utf8_text(options.checkpoint, "RUN_OR_CHECKPOINT", kRecordedAsUtf8);
  const fs::path output = options.output;
  // Never over the checkpoint it reads (its model.h5) or anything else of that run.
  check_output_path(output, "MODEL.onnx", run_files_of(options.checkpoint));
  std::unique_ptr<Backend> backend = make_backend(BackendKind::cpu);
  const OpenedBackbone opened = open_backbone(options.checkpoint, *backend);
  const Backbone& backbone = *opened.backbone;

  OnnxExportSource source;
  source.graph_name = opened.config.network;
  source.image_size = backbone.image_size();
  source.embedding_size = backbone.embedding_size();
  source.trace = [&](InferenceGraph& graph, GraphValue images) {
    return backbone.trace(graph, images);
  };
  source.metadata = {{"network", backbone.describe()},
                     {"checkpoint", opened.checkpoint.path.string()},
                     {"step", std::to_string(opened.checkpoint.step)},
                     {"input", fmt::format("{} [N, 3, {}, {}] float32 NCHW RGB, "
                                           "(pixel / 255 - 0.5) / 0.5",
                                           kOnnxInputName, source.image_size, source.image_size)},
                     {"output", fmt::format("{} [N, {}] float32, not normalised",
                                            kOnnxOutputName, source.embedding_size)},
                     {"pfc_revision", git_revision()}};
  write_onnx_model(build_onnx_model(source), output);
  fmt::print("exported {} from {} (step {}) to {}: {:.1f} MB, opset {}; input {} "
             "[N, 3, {}, {}] float32, output {} [N, {}]\n",
             backbone.describe(), opened.checkpoint.path.string(), opened.checkpoint.step,
             output.string(), static_cast<double>(fs::file_size(output)) / 1e6, kOnnxOpset,
             kOnnxInputName, source.image_size, source.image_size, kOnnxOutputName,
             source.embedding_size);
  return kExitOk;
}

}  // namespace

CommandRunner add_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a trained backbone in inference mode as an ONNX model, as insightface's "
                "torch2onnx.py does (input 'data' [N, 3, 112, 112] float32, N dynamic)");
  cmd->add_option("RUN_OR_CHECKPOINT", options->checkpoint,
                  "a run's output folder (its latest checkpoint) or a ckpt/step_NNNNNNN folder")
      ->required();
  cmd->add_option("MODEL.onnx", options->output, "the ONNX file to write (replaced if present)")
      ->required();
  return [options] { return run_export(*options); };
}

}  // namespace pfc
