#include "export/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <climits>

#include "core/error.h"
#include "export/onnx_graph_writer.h"
#include "io/durable_file.h"

namespace pfc {

namespace {

// The IR version that opset 11 came with (onnx 1.6); every runtime that reads opset 11
// reads it.
constexpr std::int64_t kOnnxIrVersion = 6;

// onnx's checker checks the graph's structure and each node against its schema; strict
// shape inference then checks every node's input types and shapes and that the declared
// output shape is the one the graph computes.
void check_model(const onnx::ModelProto& model, const std::string& what) {
  try {
    onnx::checker::check_model(model);
    onnx::ModelProto inferred = model;
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(true, 1));
  } catch (const std::exception& e) {
    throw Error(fmt::format("the ONNX model of {} does not pass onnx's checks, so none is "
                            "written: {}", what, e.what()));
  }
}

}  // namespace

onnx::ModelProto build_onnx_model(const OnnxExportSource& source) {
  PFC_CHECK(static_cast<bool>(source.trace), "ONNX export of {}: nothing traces the layers",
            source.graph_name);
  onnx::ModelProto model;
  model.set_ir_version(kOnnxIrVersion);
  model.set_producer_name("pfc");
  model.set_producer_version(PFC_VERSION);
  model.set_model_version(1);
  model.set_doc_string(fmt::format(
      "{} face embedding: input {} [N, 3, {}, {}] float32 NCHW, RGB, (pixel / 255 - 0.5) / 0.5; "
      "output {} [N, {}], not normalised",
      source.graph_name, kOnnxInputName, source.image_size, source.image_size, kOnnxOutputName,
      source.embedding_size));
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxOpset);
  for (const auto& [key, value] : source.metadata) {
    auto* entry = model.add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
  }

  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(source.graph_name);
  OnnxGraphWriter writer(graph, kOnnxInputName, source.image_size);
  const GraphValue embeddings = source.trace(writer, writer.input());
  writer.set_output(embeddings, kOnnxOutputName);
  const auto& dims = graph.output(0).type().tensor_type().shape().dim();
  PFC_CHECK(dims[1].dim_value() == source.embedding_size,
            "ONNX export of {}: the layers end in {} features, not the embedding size {}",
            source.graph_name, dims[1].dim_value(), source.embedding_size);
  check_model(model, source.graph_name);
  return model;
}

void check_onnx_size(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw UsageError(fmt::format(
        "the ONNX model is {:.2f} GiB, over the 2 GiB that one ONNX file (a protobuf message) "
        "can hold; a smaller network is needed", static_cast<double>(bytes) / (1 << 30)));
}

void write_onnx_model(const onnx::ModelProto& model, const std::filesystem::path& path) {
  check_onnx_size(model.ByteSizeLong());
  std::string bytes;
  PFC_CHECK(model.SerializeToString(&bytes), "cannot serialise the ONNX model for {}",
            path.string());
  replace_file_atomically(path, bytes);
}

}  // namespace pfc
