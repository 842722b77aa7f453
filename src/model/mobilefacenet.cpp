#include "model/mobilefacenet.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "core/counter_rng.h"
#include "model/initial_values.h"

namespace pfc {

namespace {

const MobileFaceNetOptions& checked(const MobileFaceNetOptions& o) {
  PFC_CHECK(o.blocks.size() == 4 &&
                std::all_of(o.blocks.begin(), o.blocks.end(), [](auto b) { return b >= 1; }),
            "mbf needs 4 residual stages of at least one unit, got {} stages", o.blocks.size());
  PFC_CHECK(o.scale >= 1, "mbf scale must be at least 1, got {}", o.scale);
  PFC_CHECK(o.embedding_size >= 1, "mbf embedding_size must be at least 1, got {}",
            o.embedding_size);
  PFC_CHECK(o.image_size == MobileFaceNet::kImageSize,
            "mbf needs {}x{} images: its GDC head is a {}x{} convolution over the map that four "
            "stride-2 stages leave; got image_size {}",
            MobileFaceNet::kImageSize, MobileFaceNet::kImageSize, GdcHead::kMapSize,
            GdcHead::kMapSize, o.image_size);
  return o;
}

// x itself when it has `dtype` already, else a copy converted to it.
Tensor in_dtype(Backend& backend, const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor y = backend.empty(x.shape(), dtype, MemoryPurpose::activations);
  backend.cast(x, y);
  return y;
}

// arcface_torch's channel counts: 64 * scale wide at first, 128 * scale from layers.4, and
// 512 from conv_sep on; the depthwise widths (its `groups`) are fixed whatever the scale.
constexpr std::int64_t kHeadChannels = 512;

}  // namespace

MobileFaceNet::MobileFaceNet(Backend& backend, const MobileFaceNetOptions& options)
    : ctx_(network_context(backend, options.precision, "mbf")),
      head_ctx_(ctx_.head()),
      options_(checked(options)),
      stem_(ctx_, "layers.0", {3, 64 * options.scale, 3, 2, 1, 1}, ConvBlock::Activation::prelu),
      conv_sep_(head_ctx_, "conv_sep", {128 * options.scale, kHeadChannels, 1, 1, 0, 1},
                ConvBlock::Activation::prelu),
      features_(head_ctx_, "features", kHeadChannels, options.embedding_size) {
  const std::int64_t narrow = 64 * options.scale, wide = 128 * options.scale;
  const auto residual = [&](const std::string& stage, std::int64_t channels, std::int64_t units,
                            std::int64_t width) {
    for (std::int64_t u = 0; u < units; ++u)
      units_.push_back(std::make_unique<DepthWise>(
          ctx_, stage + ".layers." + std::to_string(u),
          DepthWiseShape{channels, channels, width, 3, 1, 1, /*residual=*/true}));
  };
  const auto down = [&](const std::string& stage, std::int64_t in, std::int64_t out,
                        std::int64_t width) {
    units_.push_back(
        std::make_unique<DepthWise>(ctx_, stage, DepthWiseShape{in, out, width, 3, 2, 1, false}));
  };
  if (options.blocks[0] == 1) {
    grouped_ = std::make_unique<ConvBlock>(ctx_, "layers.1", ConvShape{narrow, narrow, 3, 1, 1, 64},
                                           ConvBlock::Activation::prelu);
  } else {
    residual("layers.1", narrow, options.blocks[0], 128);
  }
  down("layers.2", narrow, narrow, 128);
  residual("layers.3", narrow, options.blocks[1], 128);
  down("layers.4", narrow, wide, 256);
  residual("layers.5", wide, options.blocks[2], 256);
  down("layers.6", wide, wide, 512);
  residual("layers.7", wide, options.blocks[3], 256);

  // PyTorch's state_dict order: layers.0 ... layers.7, conv_sep, features.
  stem_.collect(parameters_, buffers_);
  if (grouped_) grouped_->collect(parameters_, buffers_);
  for (auto& unit : units_) unit->collect(parameters_, buffers_);
  conv_sep_.collect(parameters_, buffers_);
  features_.collect(parameters_, buffers_);
}

Tensor MobileFaceNet::forward(const Tensor& images, ForwardMode mode) {
  PFC_CHECK(images.rank() == 4 && images.dim(1) == options_.image_size &&
                images.dim(2) == options_.image_size && images.dim(3) == 3,
            "mbf: images {} are not [n, {}, {}, 3]", images.describe(), options_.image_size,
            options_.image_size);
  Backend& be = *ctx_.backend;
  Tensor x = stem_.forward(in_dtype(be, images, ctx_.activation_dtype), mode);
  if (grouped_) x = grouped_->forward(x, mode);
  for (auto& unit : units_) x = unit->forward(x, mode);
  x = in_dtype(be, x, head_ctx_.activation_dtype);
  return features_.forward(conv_sep_.forward(x, mode), mode);
}

void MobileFaceNet::backward(const Tensor& embeddings_grad) {
  Backend& be = *ctx_.backend;
  const Tensor grad = in_dtype(be, embeddings_grad, head_ctx_.activation_dtype);
  Tensor d = conv_sep_.backward(features_.backward(grad));
  d = in_dtype(be, d, ctx_.activation_dtype);
  for (auto it = units_.rbegin(); it != units_.rend(); ++it) d = (*it)->backward(d);
  if (grouped_) d = grouped_->backward(d);
  stem_.backward(d, /*need_input_grad=*/false);
}

GraphValue MobileFaceNet::trace(InferenceGraph& graph, GraphValue images) const {
  GraphValue x = stem_.trace(graph, images);
  if (grouped_) x = grouped_->trace(graph, x);
  for (const auto& unit : units_) x = unit->trace(graph, x);
  return features_.trace(graph, conv_sep_.trace(graph, x));
}

void MobileFaceNet::initialize(std::uint64_t seed) {
  const auto has_buffer = [&](const std::string& name) {
    return std::any_of(buffers_.begin(), buffers_.end(),
                       [&](const Buffer* b) { return b->name == name; });
  };
  for (Parameter* p : parameters_) {
    std::optional<Tensor> host = initial_values_buffer(*ctx_.backend, *p);
    if (!host) continue;
    float* v = host->data<float>();
    const std::int64_t n = host->numel();
    const Shape& t = p->torch_shape;
    if (p->layout != TorchLayout::same) {
      // kaiming_normal_(mode="fan_out", nonlinearity="relu"): PyTorch's fan_out is the output
      // count times the receptive field (a conv's [out, in / groups, kh, kw]; a linear's out).
      const double fan_out =
          p->layout == TorchLayout::conv_oihw ? static_cast<double>(t[0] * t[2] * t[3]) : t[0];
      const std::uint64_t key = stream_key(seed, p->name);
      const double stddev = std::sqrt(2.0 / fan_out);
      for (std::int64_t i = 0; i < n; ++i) v[i] = normal_value(key, i, stddev);
    } else {
      // A vector beside running statistics is a batch-norm's; the others are PReLU slopes.
      const std::string module = p->name.substr(0, p->name.rfind('.'));
      const bool batch_norm = has_buffer(module + ".running_mean");
      const float fill = !batch_norm ? 0.25f : (p->name.ends_with(".weight") ? 1.0f : 0.0f);
      std::fill(v, v + n, fill);
    }
    // The same f32 values in every mode: an f64 run starts where an f32 one does.
    ctx_.backend->copy_cast(*host, p->value);
  }
  for (Buffer* b : buffers_) ctx_.backend->fill(b->value, b->name.ends_with("_var") ? 1.0 : 0.0);
  refresh_working_copies();
}

std::string MobileFaceNet::describe() const {
  return fmt::format("MobileFaceNet [{}], scale {}, embedding {}, {}x{} images",
                     fmt::join(options_.blocks, ", "), options_.scale, options_.embedding_size,
                     options_.image_size, options_.image_size);
}

}  // namespace pfc
