// Reads the backbone an ONNX model holds into the tensors of a network pfc builds: arcface_torch
// models exported by insightface's torch2onnx.py (torch.onnx.export in inference mode), and
// pfc export's own. Such an export keeps few state_dict names: torch.onnx folds each batch norm
// that follows a convolution into that convolution's weight and a bias, renames the folded
// weights ("onnx::Conv_243"), stores a PReLU's slopes as [C, 1, 1] and may give a Linear's
// weight transposed to a MatMul. So the model is read by its graph, not its names: the network
// traces itself (model/inference_graph.h) and each of its layers is matched to the node that
// consumes the matched value before it (a Conv with the same kernel, stride, padding and
// groups, a BatchNormalization with the same epsilon, a PRelu, an Add of the same two values,
// a Flatten or Reshape, a Gemm or MatMul), its weights checked against the layer's shapes.
// Every node that computes on the data path must be matched, and the network's output must be
// the graph's. A folded batch norm comes back as scale 1, shift the folded bias, mean 0 and
// variance 1 - eps: the same function in inference mode.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "core/input_file.h"
#include "core/named_tensor.h"
#include "model/backbone.h"

namespace pfc {

struct OnnxBackbone {
  // Every parameter and buffer of the network, under its name, f32 in PyTorch layout.
  std::vector<NamedTensor> tensors;
  // Batch norms torch.onnx folded into the convolution before them: exact for inference, but
  // their training-mode scale is lost (fine-tuning from the model.pt keeps it).
  std::int64_t folded_batch_norms = 0;
};

// Throws a UsageError naming the file and the network's first tensor that has no counterpart
// in the graph (another network, embedding size or layout), or what is unreadable (not a
// regular file within `limit`, not an ONNX model, weights stored outside the file or in
// another element type, dimensions that overflow, Identity nodes that feed each other).
OnnxBackbone read_onnx_backbone(const std::filesystem::path& file, const Backbone& network,
                                const InputFileLimit& limit = {});

}  // namespace pfc
