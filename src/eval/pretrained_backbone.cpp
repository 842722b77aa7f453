#include "eval/pretrained_backbone.h"

#include <fmt/format.h>

#include "core/error.h"
#include "eval/onnx_backbone_reader.h"
#include "eval/torch_state_dict_reader.h"
#include "io/checkpoint_layout.h"
#include "io/checkpoint_reader.h"
#include "model/backbone_state.h"

namespace pfc {

namespace {

namespace fs = std::filesystem;

// Tensors by state_dict name, parted as the network parts them; an unknown name goes where its
// kind would (batch-norm statistics with the buffers), for the fit check to name it.
void load_named(Backbone& network, std::vector<NamedTensor> tensors, const std::string& origin) {
  std::vector<NamedTensor> parameters, buffers;
  for (NamedTensor& t : tensors) {
    if (t.value.dtype() != DType::f32) {
      // torch's BatchNorm counts its training batches; with momentum 0.1 the count is unused.
      if (t.name.ends_with(".num_batches_tracked") && t.value.numel() == 1) continue;
      throw UsageError(fmt::format("{}: tensor '{}' holds {} values; a backbone's tensors are "
                                   "floats",
                                   origin, t.name, dtype_name(t.value.dtype())));
    }
    const bool buffer = network.find_buffer(t.name) || t.name.ends_with(".running_mean") ||
                        t.name.ends_with(".running_var");
    (buffer ? buffers : parameters).push_back(std::move(t));
  }
  load_backbone_state(network, parameters, buffers, origin);
}

}  // namespace

PretrainedBackbone load_pretrained_backbone(Backbone& network, const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw UsageError(fmt::format("'{}' does not exist: a pretrained backbone is a pfc run or "
                                 "checkpoint folder, a PyTorch model.pt or an ONNX model",
                                 path.string()));
  PretrainedBackbone result;
  if (fs::is_directory(path, ec)) {
    const CheckpointInfo checkpoint = named_resume_candidates(path).newest_first.front();
    result.origin = fmt::format("checkpoint '{}'", checkpoint.path.string());
    const CheckpointBackbone saved = read_checkpoint_backbone(checkpoint.path);
    load_backbone_state(network, saved.parameters, saved.buffers, result.origin);
  } else if (path.extension() == ".onnx") {
    result.origin = fmt::format("ONNX model '{}'", path.string());
    OnnxBackbone onnx = read_onnx_backbone(path, network);
    if (onnx.folded_batch_norms > 0)
      result.notes.push_back(fmt::format(
          "{}: {} batch norms were folded into the convolutions before them (torch.onnx does "
          "this in inference mode); they are restored as scale 1 and shift the folded bias, "
          "which computes the same embeddings in inference mode, but their training-mode scale "
          "is lost: fine-tune from the model.pt the model was exported from to keep it",
          result.origin, onnx.folded_batch_norms));
    load_named(network, std::move(onnx.tensors), result.origin);
  } else {
    result.origin = fmt::format("PyTorch state_dict '{}'", path.string());
    load_named(network, read_torch_state_dict(path), result.origin);
  }
  return result;
}

}  // namespace pfc
