// What the trainer, verification, embedding extraction, export and checkpoints need of a face
// network, whichever it is (iresnet now, MobileFaceNet next): images in, embeddings out, in
// training or inference mode; a backward pass; its inference graph for other model formats;
// its tensors under PyTorch's state_dict names, converted to and from PyTorch's layouts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "model/draw_position.h"
#include "model/forward_mode.h"
#include "model/inference_graph.h"
#include "model/inference_precision.h"
#include "model/parameter.h"

namespace pfc {

class InferenceNetwork;

class Backbone {
 public:
  virtual ~Backbone() = default;

  // images [n, s, s, 3] on the backend's device, f32 or f16, normalised as (pixel/255-0.5)/0.5
  // -> embeddings [n, embedding_size()], unnormalised: f32 (f64 in the reference mode).
  virtual Tensor forward(const Tensor& images, ForwardMode mode) = 0;
  // After a training forward: fills every parameter's grad from d loss / d embeddings and
  // frees the kept activations.
  virtual void backward(const Tensor& embeddings_grad) = 0;
  // Where the next training forward is in the run, for a network that draws at random (the
  // Vision Transformers); the others draw nothing and ignore it.
  virtual void set_draw_position(const DrawPosition&) {}
  // The network in inference mode as layer applications on `graph` (model/inference_graph.h),
  // from normalised NCHW images to the embeddings.
  virtual GraphValue trace(InferenceGraph& graph, GraphValue images) const = 0;

  // The network only runs inference from now on, its parameters and buffers unchanged (an
  // inference command). Where the backend fuses inference (Backend::fuses_inference), it is
  // prepared once as an InferenceNetwork: batch-norms folded into the convolutions, PReLU and
  // residual sums run with them, in `precision`. Elsewhere precision must be f32, and infer()
  // stays forward(images, ForwardMode::inference), as it is without this call.
  void prepare_inference(InferencePrecision precision);
  // Embeddings of images in inference mode: forward's contract, through the prepared network
  // when there is one. f32 embeddings (f64 in an f64 run; f16 on cuda in fp16).
  Tensor infer(const Tensor& images);

  // The network's own initialisation, drawn from the counter RNG keyed by (seed, name).
  virtual void initialize(std::uint64_t seed) = 0;
  // Working copies := f32 masters (after every optimiser step, import or restore).
  void refresh_working_copies();

  // What the network is, for messages and logs: "iresnet [3, 4, 14, 3] ..., embedding 512".
  virtual std::string describe() const = 0;
  // The masters' element type: f32, or f64 in an f64 run.
  virtual DType master_dtype() const = 0;
  virtual std::int64_t image_size() const = 0;
  virtual std::int64_t embedding_size() const = 0;
  virtual Backend& backend() const = 0;
  // Trained tensors and saved buffers, in PyTorch's state_dict order.
  virtual const std::vector<Parameter*>& parameters() const = 0;
  virtual const std::vector<Buffer*>& buffers() const = 0;

  Parameter* find_parameter(const std::string& name) const;
  Buffer* find_buffer(const std::string& name) const;
  std::int64_t parameter_count() const;

  // Host tensors in PyTorch layout, by state_dict name, f32 or f64 (converted to the master
  // type); the import refreshes the working copy. Names and shapes are checked.
  void import_parameter(const std::string& name, const Tensor& torch_layout);
  void import_buffer(const std::string& name, const Tensor& values);
  // `ours` (the value, or a tensor of the same shape: a gradient, a momentum) in PyTorch
  // layout on the host, of the same element type (f32, or f64 in an f64 run).
  Tensor export_parameter(const Parameter& p, const Tensor& ours) const;
  Tensor export_parameter(const Parameter& p) const { return export_parameter(p, p.value); }

 private:
  // Shared only so that this header need not define it.
  std::shared_ptr<InferenceNetwork> prepared_;
};

}  // namespace pfc
