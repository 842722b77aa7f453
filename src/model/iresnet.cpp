#include "model/iresnet.h"

#include <fmt/ranges.h>

#include <cmath>

#include "core/counter_rng.h"
#include "model/initial_values.h"

namespace pfc {

namespace {

void check_options(const IResNetOptions& o) {
  PFC_CHECK(o.layers.size() == 4 && o.widths.size() == 4,
            "iresnet needs 4 stages, got {} depths and {} widths", o.layers.size(),
            o.widths.size());
  PFC_CHECK(o.image_size % 16 == 0 && o.image_size >= 16,
            "iresnet image_size must be a multiple of 16, got {}", o.image_size);
}

// Standard normal number `index` of a counter stream (Box-Muller on two uniforms).
double counter_normal(std::uint64_t key, std::uint64_t index) {
  const double u1 = 1.0 - uniform53(key, 2 * index);
  const double u2 = uniform53(key, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace

IResNet::IResNet(Backend& backend, const IResNetOptions& options)
    : ctx_(network_context(backend, options.precision, "iresnet")),
      options_((check_options(options), options)),
      conv1_(ctx_, "conv1", 3, options.widths[0], 3, 1, 1),
      bn1_(ctx_, "bn1", options.widths[0]),
      prelu_(ctx_, "prelu", options.widths[0]) {
  parameters_.push_back(&conv1_.weight);
  bn1_.collect(parameters_, buffers_);
  parameters_.push_back(&prelu_.weight);

  std::int64_t in_channels = options.widths[0];
  for (std::size_t stage = 0; stage < 4; ++stage) {
    for (std::int64_t b = 0; b < options.layers[stage]; ++b) {
      const std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(b);
      blocks_.push_back(std::make_unique<IBasicBlock>(ctx_, name, in_channels,
                                                      options.widths[stage], b == 0 ? 2 : 1));
      blocks_.back()->collect(parameters_, buffers_);
      in_channels = options.widths[stage];
    }
  }
  const std::int64_t final_size = options.image_size / 16;
  bn2_ = std::make_unique<BatchNorm>(ctx_, "bn2", in_channels);
  bn2_->collect(parameters_, buffers_);
  fc_ = std::make_unique<FlattenLinear>(ctx_, "fc", in_channels, final_size, final_size,
                                        options.embedding_size);
  fc_->collect(parameters_);
  features_ = std::make_unique<BatchNorm>(ctx_, "features", options.embedding_size,
                                          /*trainable_scale=*/false);
  features_->collect(parameters_, buffers_);
}

Tensor IResNet::forward(const Tensor& images, ForwardMode mode) {
  PFC_CHECK(images.rank() == 4 && images.dim(1) == options_.image_size &&
                images.dim(2) == options_.image_size && images.dim(3) == 3,
            "iresnet: images {} are not [n, {}, {}, 3]", images.describe(), options_.image_size,
            options_.image_size);
  Tensor x = images;
  if (images.dtype() != ctx_.activation_dtype) {
    x = ctx_.activation(images.shape());
    ctx_.backend->cast(images, x);
  }
  x = prelu_.forward(bn1_.forward(conv1_.forward(x, mode), mode), mode);
  // As in the blocks, bn1's output is remade for the backward instead of held.
  if (mode == ForwardMode::training) prelu_.drop_input();
  for (auto& block : blocks_) x = block->forward(x, mode);
  // Dropout has p = 0 in arcface_torch: the identity.
  return features_->forward(fc_->forward(bn2_->forward(x, mode), mode), mode);
}

void IResNet::backward(const Tensor& embeddings_grad) {
  Tensor grad = embeddings_grad;
  if (grad.dtype() != ctx_.head_dtype()) {
    grad = ctx_.backend->empty(embeddings_grad.shape(), ctx_.head_dtype(),
                               MemoryPurpose::activations);
    ctx_.backend->cast(embeddings_grad, grad);
  }
  Tensor d = bn2_->backward(fc_->backward(features_->backward(grad)));
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) d = (*it)->backward(d);
  prelu_.restore_input(bn1_.recompute_output());
  conv1_.backward(bn1_.backward(prelu_.backward(d)), /*need_input_grad=*/false);
}

GraphValue IResNet::trace(InferenceGraph& graph, GraphValue images) const {
  GraphValue x = prelu_.trace(graph, bn1_.trace(graph, conv1_.trace(graph, images)));
  for (const auto& block : blocks_) x = block->trace(graph, x);
  return features_->trace(graph, fc_->trace(graph, bn2_->trace(graph, x)));
}

void IResNet::initialize(std::uint64_t seed) {
  for (Parameter* p : parameters_) {
    const std::string& name = p->name;
    const auto ends_with = [&](const char* suffix) {
      const std::string s(suffix);
      return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    std::optional<Tensor> host = initial_values_buffer(*ctx_.backend, *p);
    if (!host) continue;
    float* v = host->data<float>();
    const std::int64_t n = host->numel();
    const std::uint64_t key = stream_key(seed, name);
    if (p->layout == TorchLayout::conv_oihw) {
      for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(0.1 * counter_normal(key, i));
    } else if (name.rfind("fc.", 0) == 0) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(fc_->weight.value.dim(1)));
      for (std::int64_t i = 0; i < n; ++i)
        v[i] = static_cast<float>(bound * (2.0 * uniform53(key, i) - 1.0));
    } else if (ends_with("prelu.weight")) {
      for (std::int64_t i = 0; i < n; ++i) v[i] = 0.25f;
    } else {  // batch-norm scale 1, shift 0
      const float fill = ends_with(".weight") ? 1.0f : 0.0f;
      for (std::int64_t i = 0; i < n; ++i) v[i] = fill;
    }
    // The same f32 values in every mode: an f64 run starts where an f32 one does.
    ctx_.backend->copy_cast(*host, p->value);
  }
  for (Buffer* b : buffers_)
    ctx_.backend->fill(b->value, b->name.size() > 4 && b->name.ends_with("_var") ? 1.0 : 0.0);
  refresh_working_copies();
}

std::string IResNet::describe() const {
  return fmt::format("iresnet [{}], widths [{}], embedding {}, {}x{} images",
                     fmt::join(options_.layers, ", "), fmt::join(options_.widths, ", "),
                     options_.embedding_size, options_.image_size, options_.image_size);
}

}  // namespace pfc
