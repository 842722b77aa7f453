// arcface_torch's IResNet (iresnet18 ... iresnet200, or any depths and widths for tests):
// images [n, s, s, 3] -> embeddings [n, embedding_size] f32 (f64 in an f64 run).
// Parameters and buffers carry PyTorch's state_dict names and convert to and from PyTorch's
// layouts by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/batch_norm.h"
#include "model/conv2d.h"
#include "model/ibasic_block.h"
#include "model/linear.h"
#include "model/prelu.h"

namespace pfc {

struct IResNetOptions {
  std::vector<std::int64_t> layers{3, 4, 14, 3};
  std::vector<std::int64_t> widths{64, 128, 256, 512};
  std::int64_t image_size = 112;
  std::int64_t embedding_size = 512;
  // f32; f16 for the CUDA backend's fp16 mode (f32 masters); f64 for an f64 run, where the
  // masters, gradients, batch-norm statistics and running buffers are f64 too (the CPU
  // backend's exact-arithmetic mode, checked against the f64 golden file).
  DType activations = DType::f32;
};

class IResNet {
 public:
  IResNet(Backend& backend, const IResNetOptions& options);

  // images: [n, s, s, 3] on the backend's device, f32, f16 or f64. Keeps what backward needs.
  Tensor forward(const Tensor& images);
  // Fills every parameter's grad from d loss / d embeddings [n, emb] (f32 or f64; converted to
  // the head's type), and frees the saved activations.
  void backward(const Tensor& embeddings_grad);
  // The network in inference mode, from normalised images [n, 3, s, s] to the embeddings.
  GraphValue trace(InferenceGraph& graph, GraphValue images) const;

  // arcface_torch's initialisation, drawn from the counter RNG keyed by (seed, name):
  // conv N(0, 0.1), BN scale 1 and shift 0, Linear U(+-1/sqrt(fan_in)), PReLU 0.25.
  void initialize(std::uint64_t seed);
  // Working copies := masters (after every optimiser step in fp16 mode).
  void refresh_working_copies();

  const std::vector<Parameter*>& parameters() const { return parameters_; }
  const std::vector<Buffer*>& buffers() const { return buffers_; }
  Parameter* find_parameter(const std::string& name) const;
  Buffer* find_buffer(const std::string& name) const;
  std::int64_t parameter_count() const;

  // Host tensors in PyTorch layout, by state_dict name. An import takes f32 or f64 and
  // converts to the master type; an export has the element type of `ours` (f32 or f64).
  void import_parameter(const std::string& name, const Tensor& torch_layout);
  Tensor export_parameter(const Parameter& p, const Tensor& ours) const;
  Tensor export_parameter(const Parameter& p) const { return export_parameter(p, p.value); }

  const IResNetOptions& options() const { return options_; }
  // The masters' element type (f32, or f64 in an f64 run).
  DType master_dtype() const { return ctx_.master_dtype(); }
  Backend& backend() const { return *ctx_.backend; }

 private:
  ModelContext ctx_;
  IResNetOptions options_;
  Conv2d conv1_;
  BatchNorm bn1_;
  PRelu prelu_;
  std::vector<std::unique_ptr<IBasicBlock>> blocks_;
  std::unique_ptr<BatchNorm> bn2_;
  std::unique_ptr<FlattenLinear> fc_;
  std::unique_ptr<BatchNorm> features_;
  std::vector<Parameter*> parameters_;
  std::vector<Buffer*> buffers_;
};

}  // namespace pfc
