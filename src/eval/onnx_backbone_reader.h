// Reads the backbone an ONNX model holds into the tensors of a network pfc builds: arcface_torch
// models exported by insightface's torch2onnx.py (torch.onnx.export in inference mode, opset
// 11, a fixed or a dynamic batch), and pfc export's own. Such an export keeps few state_dict
// names: torch.onnx folds each batch norm that follows a convolution into that convolution's
// weight and a bias, renames the folded weights ("onnx::Conv_243"), stores a PReLU's slopes as
// [C, 1, 1] and gives a Linear's weight transposed to a MatMul. So the model is read by its
// graph, not its names: the network traces itself (model/inference_graph.h) and each of its
// layers is matched to the node that consumes the matched value before it, its weights checked
// against the layer's shapes:
// - a Conv with the same kernel, stride, padding and groups (and a bias where the layer has
//   one), a BatchNormalization with the same epsilon (a BatchNorm1d possibly between an
//   Unsqueeze and a Squeeze of axis 2), a PRelu, an Add of the same two values, a Flatten or
//   Reshape, a Gemm or a MatMul (then an Add of the bias);
// - the Vision Transformers' layers as torch.onnx writes them at opset 11: tokens as Reshape ->
//   Transpose (0, 2, 1); the position embedding as an Add of a constant; LayerNorm as
//   ReduceMean(-1), Sub, Pow 2, ReduceMean(-1), Add eps, Sqrt, Div, Mul, Add; ReLU6 as
//   Clip(0, 6); attention as Reshape [N, T, 3, heads, d] -> Transpose (2, 0, 3, 1, 4) -> Gather
//   0, 1, 2 -> MatMul(q, Transpose(k, (0, 1, 3, 2))) -> Mul 1/sqrt(d) -> Softmax(-1) ->
//   MatMul(·, v) -> Transpose (0, 2, 1, 3) -> Reshape [N, T, c]. A Reshape's target is checked
//   as far as the graph tells it without running: a constant, or a Concat of constants and of
//   sizes read off the input (a dynamic batch), so that another head count is refused.
// Every node that computes on the data path must be matched (only aliases, constants and the
// arithmetic of shapes need not be), and the network's output must be the graph's. A folded
// batch norm comes back as scale 1, shift the folded bias, mean 0 and variance 1 - eps: the
// same function in inference mode.
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
  // Parameters that only training reads (the ViT's mask_token, for masking), which an
  // inference graph does not hold: they come back as zeros.
  std::vector<std::string> untraced;
};

// Throws a UsageError naming the file and the network's first tensor that has no counterpart
// in the graph (another network, embedding size or layout), or what is unreadable (not a
// regular file within `limit`, not an ONNX model, weights stored outside the file or in
// another element type, dimensions that overflow, Identity nodes that feed each other).
OnnxBackbone read_onnx_backbone(const std::filesystem::path& file, const Backbone& network,
                                const InputFileLimit& limit = {});

}  // namespace pfc
