#include "eval/pretrained_backbone.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/input_file.h"
#include "eval/model_file_limits.h"
#include "eval/onnx_backbone_reader.h"
#include "eval/torch_state_dict_reader.h"
#include "io/checkpoint_layout.h"
#include "io/checkpoint_reader.h"
#include "io/zip_archive.h"
#include "model/backbone_state.h"

namespace pfc {

namespace {

namespace fs = std::filesystem;

const char* const kWhatItIs =
    "a pretrained backbone is a pfc run or checkpoint folder, a PyTorch model.pt or an ONNX "
    "model";

// A NaN or an infinity in a model is a damaged or diverged one: refused at load, naming the
// tensor, rather than trained on.
template <class T>
void check_finite(const NamedTensor& t, const std::string& origin) {
  const T* v = t.value.data<T>();
  for (std::int64_t i = 0; i < t.value.numel(); ++i)
    if (!std::isfinite(v[i]))
      throw UsageError(fmt::format("{}: tensor '{}' holds {} (value {} of {}): the model is "
                                   "damaged or comes from a run that diverged",
                                   origin, t.name, std::isnan(v[i]) ? "NaN" : "an infinity", i,
                                   t.value.numel()));
}

void check_finite(const std::vector<NamedTensor>& tensors, const std::string& origin) {
  for (const NamedTensor& t : tensors) {
    if (t.value.dtype() == DType::f32) check_finite<float>(t, origin);
    if (t.value.dtype() == DType::f64) check_finite<double>(t, origin);
  }
}

bool is_buffer(const Backbone& network, const std::string& name) {
  return network.find_buffer(name) || name.ends_with(".running_mean") ||
         name.ends_with(".running_var");
}

// torch's BatchNorm counts its training batches; with momentum 0.1 the count is unused.
bool is_batch_counter(const std::string& name, DType dtype, std::int64_t numel) {
  return dtype != DType::f32 && name.ends_with(".num_batches_tracked") && numel == 1;
}

void refuse_non_float(const std::string& origin, const std::string& name, DType dtype) {
  throw UsageError(fmt::format("{}: tensor '{}' holds {} values; a backbone's tensors are floats",
                               origin, name, dtype_name(dtype)));
}

// Tensors by state_dict name, parted as the network parts them; an unknown name goes where its
// kind would (batch-norm statistics with the buffers), for the fit check to name it.
void load_named(Backbone& network, std::vector<NamedTensor> tensors, const std::string& origin) {
  std::vector<NamedTensor> parameters, buffers;
  for (NamedTensor& t : tensors) {
    if (t.value.dtype() != DType::f32) {
      if (is_batch_counter(t.name, t.value.dtype(), t.value.numel())) continue;
      refuse_non_float(origin, t.name, t.value.dtype());
    }
    (is_buffer(network, t.name) ? buffers : parameters).push_back(std::move(t));
  }
  check_finite(parameters, origin);
  check_finite(buffers, origin);
  load_backbone_state(network, parameters, buffers, origin);
}

// A state_dict's names, element types and shapes are checked against the network from its
// pickle alone; then only the network's tensors are read.
void load_torch(Backbone& network, const fs::path& path, const ModelFileLimits& limits,
                const std::string& origin) {
  TorchStateDictLimits torch_limits{limits.file, limits.storage_bytes, limits.pickle_bytes,
                                    limits.pickle_opcodes,
                                    fmt::format("the network {}", network.describe())};
  const TorchStateDict dict(path, torch_limits);
  std::vector<NamedShape> parameters, buffers;
  std::set<std::string> wanted;
  for (const TorchStateDict::Entry& entry : dict.entries()) {
    if (entry.dtype != DType::f32) {
      if (is_batch_counter(entry.name, entry.dtype, shape_numel(entry.shape))) continue;
      refuse_non_float(origin, entry.name, entry.dtype);
    }
    (is_buffer(network, entry.name) ? buffers : parameters).push_back({entry.name, entry.shape});
    wanted.insert(entry.name);
  }
  check_backbone_shapes(network, parameters, buffers, origin);
  load_named(network, dict.read(wanted), origin);
}

enum class ModelFileKind { torch, onnx };

// By the file's first bytes, not its name: torch.save writes a zip archive (PyTorch's legacy
// format begins as a pickle, which the torch reader names); anything else is read as ONNX,
// whose protobuf has no magic number, and refused by that reader if it is not one.
ModelFileKind model_file_kind(const fs::path& path, const ModelFileLimits& limits) {
  std::string why;
  const std::optional<InputFile> file = InputFile::open(path, limits.file, why);
  if (!file) throw UsageError(fmt::format("'{}' {}: {}", path.string(), why, kWhatItIs));
  const std::vector<std::uint8_t> head = file->head(4);
  const bool legacy_torch = head.size() == 4 && head[0] == 0x80 && head[2] == 0x8a;
  return looks_like_zip(head) || legacy_torch ? ModelFileKind::torch : ModelFileKind::onnx;
}

}  // namespace

PretrainedBackbone load_pretrained_backbone(Backbone& network, const fs::path& path) {
  PretrainedBackbone result;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const CheckpointInfo checkpoint = named_resume_candidates(path).newest_first.front();
    result.origin = fmt::format("checkpoint '{}'", checkpoint.path.string());
    const CheckpointBackbone saved = read_checkpoint_backbone(checkpoint.path);
    check_finite(saved.parameters, result.origin);
    check_finite(saved.buffers, result.origin);
    load_backbone_state(network, saved.parameters, saved.buffers, result.origin);
    return result;
  }
  const ModelFileLimits limits = model_file_limits(network);
  if (model_file_kind(path, limits) == ModelFileKind::onnx) {
    result.origin = fmt::format("ONNX model '{}'", path.string());
    OnnxBackbone onnx = read_onnx_backbone(path, network, limits.file);
    if (onnx.folded_batch_norms > 0)
      result.notes.push_back(fmt::format(
          "{}: {} batch norms were folded into the convolutions before them (torch.onnx does "
          "this in inference mode); they are restored as scale 1 and shift the folded bias, "
          "which computes the same embeddings in inference mode, but their training-mode scale "
          "is lost: fine-tune from the model.pt the model was exported from to keep it",
          result.origin, onnx.folded_batch_norms));
    if (!onnx.untraced.empty())
      result.notes.push_back(fmt::format(
          "{}: {}: read by training's masking alone, so in no inference model; set to 0",
          result.origin, fmt::join(onnx.untraced, ", ")));
    load_named(network, std::move(onnx.tensors), result.origin);
  } else {
    result.origin = fmt::format("PyTorch state_dict '{}'", path.string());
    load_torch(network, path, limits, result.origin);
  }
  return result;
}

}  // namespace pfc
