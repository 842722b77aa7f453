// A backbone in inference mode as an ONNX model, as insightface's torch2onnx.py makes it:
// input `data` [N, 3, s, s] float32 NCHW, RGB, (pixel / 255 - 0.5) / 0.5, N dynamic; output
// `embedding` [N, embedding_size], not normalised; opset 11. The model is checked with
// onnx's checker and its strict shape inference before anything is written, and written to
// a temporary name that is renamed when complete.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/inference_graph.h"

namespace pfc {

inline constexpr const char* kOnnxInputName = "data";
inline constexpr const char* kOnnxOutputName = "embedding";
inline constexpr std::int64_t kOnnxOpset = 11;

struct OnnxExportSource {
  std::string graph_name;          // e.g. "r50"
  std::int64_t image_size = 112;
  std::int64_t embedding_size = 512;
  // Traces the backbone's layers into the graph, from the images to the embeddings.
  std::function<GraphValue(InferenceGraph&, GraphValue)> trace;
  // Written as the model's metadata_props (network, step, ...).
  std::vector<std::pair<std::string, std::string>> metadata;
};

// Builds and checks the model. A backbone whose weights are not finite is a UsageError;
// one that the checker refuses is an Error naming what it found.
onnx::ModelProto build_onnx_model(const OnnxExportSource& source);

// Serialises the model to `path` (through path + ".tmp"; nothing is left on failure). A
// model over protobuf's 2 GiB limit for one message is refused with its size.
void write_onnx_model(const onnx::ModelProto& model, const std::filesystem::path& path);

// The largest model one ONNX file holds (protobuf's limit on a message: 2^31 - 1 bytes).
void check_onnx_size(std::size_t bytes);

}  // namespace pfc
