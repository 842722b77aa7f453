// A backbone prepared for an inference command on a backend that fuses inference
// (Backend::fuses_inference): its inference graph (model/inference_graph.h) recorded once,
// then rewritten as onnxruntime and oneDNN's graph passes do, whichever network it is:
//  - a batch-norm after a convolution or a Linear is folded into its weights and bias;
//  - a PReLU or ReLU6 after one, and then a residual sum of its output, run as its epilogue
//    (Backend::conv2d_forward_fused), so its output is written once;
//  - a flatten and the Linear after it become one convolution whose kernel covers the whole
//    map (the Linear's columns reordered from PyTorch's CHW to pfc's HWC); a Linear over
//    tokens (a Vision Transformer's qkv, proj and MLP) is a 1x1 convolution, so the residual
//    sum after it is its epilogue too;
//  - what is left (a batch-norm before a convolution, whose padding makes folding inexact,
//    any PReLU, ReLU6, sum or batch-norm that does not follow one, and the transformers'
//    LayerNorm, attention and position embedding) runs as its own primitive.
// A batch runs through it a few samples at a time, so that each pass's activations stay in the
// CPU's caches. The folding is done in f64 from the f32 parameters, then rounded once. In bf16
// precision the folded filters are rounded to bf16, and attention's products take bf16 q, k, v
// and scores; a convolution or LayerNorm whose output only bf16 products read (an MLP's
// hidden layer, attention's q, k, v, the normalised tokens) writes it in bf16; biases, slopes,
// sums and everything else stay f32. The parameters must not change while it is in use
// (Backbone::prepare_inference); the plain forward stays the reference it is tested against.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "model/inference_precision.h"

namespace pfc {

class Backbone;

class InferenceNetwork {
 public:
  InferenceNetwork(const Backbone& backbone, InferencePrecision precision);
  ~InferenceNetwork();

  // images [n, s, s, 3] f32 -> embeddings [n, embedding_size] f32 (Backbone::forward's), a few
  // samples at a time.
  Tensor forward(const Tensor& images);

  // What the rewriting left, for tests and logs: fused convolutions, and the primitives
  // that run on their own.
  std::int64_t convolutions() const;
  std::int64_t standalone_steps() const;
  // The values kept in bf16 between a convolution or LayerNorm and the bf16 products that read
  // them.
  std::int64_t bf16_values() const;

 private:
  struct Step;
  // forward's work on the samples of one pass.
  Tensor forward_pass(const Tensor& images);

  Backend& backend_;
  // The operands of the convolutions and of attention's products: f32, or bf16.
  DType products_ = DType::f32;
  std::vector<DType> types_;  // by value: f32, or bf16 where only bf16 products read it
  std::vector<Step> steps_;
  std::int64_t values_ = 0;      // value ids are below this
  std::int64_t input_ = -1, output_ = -1;
  std::int64_t embedding_size_ = 0;
  std::vector<std::int64_t> last_use_;  // by value: the last step that reads it
};

}  // namespace pfc
