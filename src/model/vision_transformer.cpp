#include "model/vision_transformer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/counter_rng.h"
#include "model/initial_values.h"

namespace pfc {

void check_vision_transformer_options(const VisionTransformerOptions& o) {
  if (o.embed_dim < 1)
    throw UsageError(fmt::format("embed_dim = {}: it must be at least 1", o.embed_dim));
  if (o.depth < 1) throw UsageError(fmt::format("depth = {}: it must be at least 1", o.depth));
  if (o.num_heads < 1 || o.embed_dim % o.num_heads != 0)
    throw UsageError(fmt::format(
        "num_heads = {}: the heads must divide embed_dim = {} (allowed: a divisor of {})",
        o.num_heads, o.embed_dim, o.embed_dim));
  // vit.py's 112 leaves 4 pixels beside its 12 x 12 patches of 9, as its strided convolution.
  if (o.patch_size < 1 || o.image_size < o.patch_size ||
      (o.image_size != 112 && o.image_size % o.patch_size != 0))
    throw UsageError(fmt::format(
        "image_size = {}: a Vision Transformer cuts its images into {}x{} patches; allowed: "
        "112 (as vit.py) or a multiple of {}",
        o.image_size, o.patch_size, o.patch_size, o.patch_size));
  if (!(o.mask_ratio >= 0.0 && o.mask_ratio < 1.0))
    throw UsageError(fmt::format("mask_ratio = {}: allowed values are in [0, 1)", o.mask_ratio));
  if (!(o.drop_path_rate >= 0.0 && o.drop_path_rate < 1.0))
    throw UsageError(
        fmt::format("drop_path_rate = {}: allowed values are in [0, 1)", o.drop_path_rate));
  if (o.embedding_size < 1)
    throw UsageError(
        fmt::format("embedding_size = {}: it must be at least 1", o.embedding_size));
}

namespace {

const VisionTransformerOptions& checked(const VisionTransformerOptions& o) {
  check_vision_transformer_options(o);
  return o;
}

}  // namespace

VisionTransformer::VisionTransformer(Backend& backend, const VisionTransformerOptions& options)
    : ctx_(network_context(backend, options.precision, "vit")),
      head_ctx_(ctx_.head()),
      options_(checked(options)),
      grid_(options.image_size / options.patch_size),
      pos_embed_(create_parameter(backend, ctx_.master_dtype(), ctx_.master_dtype(), "pos_embed",
                                  {1, grid_ * grid_, options.embed_dim},
                                  {1, grid_ * grid_, options.embed_dim}, TorchLayout::same)),
      mask_token_(create_parameter(backend, ctx_.master_dtype(), ctx_.master_dtype(),
                                   "mask_token", {1, 1, options.embed_dim},
                                   {1, 1, options.embed_dim}, TorchLayout::same)),
      patch_(ctx_, "patch_embed.proj", 3, options.embed_dim, options.patch_size,
             options.patch_size, 0),
      patch_bias_(create_parameter(backend, ctx_.master_dtype(), ctx_.master_dtype(),
                                   "patch_embed.proj.bias", {options.embed_dim},
                                   {options.embed_dim}, TorchLayout::same)),
      norm_(head_ctx_, "norm", options.embed_dim),
      feature0_(head_ctx_, "feature.0", grid_ * grid_ * options.embed_dim, options.embed_dim,
                /*with_bias=*/false),
      feature1_(head_ctx_, "feature.1", options.embed_dim, true, 2e-5),
      feature2_(head_ctx_, "feature.2", options.embed_dim, options.embedding_size,
                /*with_bias=*/false),
      feature3_(head_ctx_, "feature.3", options.embedding_size, true, 2e-5) {
  const std::vector<double> rates = drop_path_rates();
  for (std::int64_t b = 0; b < options.depth; ++b)
    blocks_.push_back(std::make_unique<VitBlock>(
        ctx_, "blocks." + std::to_string(b), options.embed_dim, options.num_heads,
        options.mlp_ratio * options.embed_dim, rates[b], options.checkpoint));
  // PyTorch's state_dict order: the module's own parameters, then its children's.
  parameters_ = {&pos_embed_, &mask_token_, &patch_.weight, &patch_bias_};
  for (auto& block : blocks_) block->collect(parameters_);
  norm_.collect(parameters_);
  feature0_.collect(parameters_);
  std::vector<Parameter*> bn;
  feature1_.collect(bn, buffers_);
  parameters_.insert(parameters_.end(), bn.begin(), bn.end());
  feature2_.collect(parameters_);
  bn.clear();
  feature3_.collect(bn, buffers_);
  parameters_.insert(parameters_.end(), bn.begin(), bn.end());
}

std::int64_t VisionTransformer::kept_tokens() const {
  return static_cast<std::int64_t>(static_cast<double>(tokens()) * (1.0 - kAppliedMaskRatio));
}

namespace {

// torch.linspace(0, end, steps) in T, as PyTorch's CPU kernel computes it: start + i * step up
// to halfway, end - (steps - 1 - i) * step after.
template <class T>
std::vector<double> linspace_from_zero(double end_value, std::int64_t steps) {
  std::vector<double> values(steps, 0.0);
  if (steps < 2) return values;
  const T end = static_cast<T>(end_value);
  const T step = end / static_cast<T>(steps - 1);
  for (std::int64_t i = 0; i < steps; ++i)
    values[i] = i < steps / 2 ? step * static_cast<T>(i)
                              : end - step * static_cast<T>(steps - i - 1);
  return values;
}

}  // namespace

std::vector<double> VisionTransformer::drop_path_rates() const {
  // vit.py's [x.item() for x in torch.linspace(0, rate, depth)], in PyTorch's default type:
  // float32, or float64 where arcface_torch runs in f64 as an f64 run does. Each kept branch is
  // then divided by exactly arcface_torch's 1 - rate.
  return ctx_.master_dtype() == DType::f64
             ? linspace_from_zero<double>(options_.drop_path_rate, options_.depth)
             : linspace_from_zero<float>(options_.drop_path_rate, options_.depth);
}

Tensor VisionTransformer::in_type(const Tensor& x, DType dtype) const {
  if (x.dtype() == dtype) return x;
  Tensor y = ctx_.backend->empty(x.shape(), dtype, MemoryPurpose::activations);
  ctx_.backend->cast(x, y);
  return y;
}

Tensor VisionTransformer::index_tensor(const std::vector<std::int64_t>& rows) const {
  Tensor host = Tensor::host({static_cast<std::int64_t>(rows.size())}, DType::i64);
  std::copy(rows.begin(), rows.end(), host.data<std::int64_t>());
  Tensor index = ctx_.backend->empty(host.shape(), DType::i64, MemoryPurpose::activations);
  ctx_.backend->copy(host, index);
  return index;
}

VitDraws VisionTransformer::draws_for(std::int64_t samples) {
  const bool masking = options_.mask_ratio > 0.0;
  if (!replayed_)
    return draw_vit_randomness(position_, samples, tokens(), drop_path_rates(), masking);
  VitDraws d = std::move(*replayed_);
  replayed_.reset();
  PFC_CHECK(static_cast<std::int64_t>(d.drop_path_keep.size()) == options_.depth * 2 * samples,
            "vit: {} replayed DropPath decisions for {} blocks x 2 branches x {} samples",
            d.drop_path_keep.size(), options_.depth, samples);
  PFC_CHECK(!masking || static_cast<std::int64_t>(d.mask_noise.size()) == samples * tokens(),
            "vit: {} replayed mask noise values for {} samples x {} tokens", d.mask_noise.size(),
            samples, tokens());
  return d;
}

Tensor VisionTransformer::forward(const Tensor& images, ForwardMode mode) {
  PFC_CHECK(images.rank() == 4 && images.dim(1) == options_.image_size &&
                images.dim(2) == options_.image_size && images.dim(3) == 3,
            "vit: images {} are not [n, {}, {}, 3]", images.describe(), options_.image_size,
            options_.image_size);
  Backend& be = *ctx_.backend;
  const std::int64_t n = images.dim(0), width = options_.embed_dim, all = tokens();
  const bool training = mode == ForwardMode::training;
  Tensor x = patch_.forward(in_type(images, ctx_.activation_dtype), mode);
  Tensor rows = x.reshape({n * all, width});
  be.add_row_vector(rows, patch_bias_.value);
  Tensor per_sample = x.reshape({n, all * width});
  be.add_row_vector(per_sample, pos_embed_.value.reshape({all * width}));

  VitDraws draws;
  if (training) draws = draws_for(n);
  masked_ = training && options_.mask_ratio > 0.0;
  std::int64_t kept = all;
  if (masked_) {
    kept = kept_tokens();
    const TokenSplit split = split_tokens(draws.mask_noise, n, all, kept);
    kept_rows_ = index_tensor(split.kept);
    dropped_rows_ = index_tensor(split.dropped);
    Tensor kept_tokens_rows = ctx_.activation({n * kept, width});
    be.gather_rows(rows, kept_rows_, kept_tokens_rows);
    rows = kept_tokens_rows;
  }
  samples_ = n;
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    BlockDropPath drop;
    if (training) {
      const auto at = draws.drop_path_keep.begin() + static_cast<std::ptrdiff_t>(b * 2 * n);
      drop.attention_keep.assign(at, at + n);
      drop.mlp_keep.assign(at + n, at + 2 * n);
    }
    rows = blocks_[b]->forward(rows, n, mode, drop);
  }
  Tensor h = norm_.forward(in_type(rows, head_ctx_.activation_dtype), mode);
  if (masked_) {
    Tensor full = head_ctx_.activation({n * all, width});
    be.fill(full, 0.0);
    be.add_row_vector(full, mask_token_.value.reshape({width}));
    be.scatter_rows(h, kept_rows_, full);
    h = full;
  }
  Tensor f = feature0_.forward(h.reshape({n, all * width}), mode);
  f = feature1_.forward(f, mode);
  f = feature2_.forward(f, mode);
  return feature3_.forward(f, mode);
}

void VisionTransformer::backward(const Tensor& embeddings_grad) {
  Backend& be = *ctx_.backend;
  const std::int64_t n = samples_, width = options_.embed_dim, all = tokens();
  Tensor d = feature3_.backward(in_type(embeddings_grad, head_ctx_.activation_dtype));
  d = feature0_.backward(feature1_.backward(feature2_.backward(d)));
  d = d.reshape({n * all, width});
  Tensor mask_grad = mask_token_.grad.reshape({width});
  if (masked_) {
    const std::int64_t kept = kept_tokens();
    Tensor kept_grad = head_ctx_.activation({n * kept, width});
    be.gather_rows(d, kept_rows_, kept_grad);
    Tensor dropped_grad = head_ctx_.activation({n * (all - kept), width});
    be.gather_rows(d, dropped_rows_, dropped_grad);
    be.sum_rows(dropped_grad, mask_grad);
    d = kept_grad;
  } else {
    be.fill(mask_grad, 0.0);
  }
  d = in_type(norm_.backward(d), ctx_.activation_dtype);
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) d = (*it)->backward(d);
  if (masked_) {
    Tensor full = ctx_.activation({n * all, width});
    be.fill(full, 0.0);
    be.scatter_rows(d, kept_rows_, full);
    d = full;
    kept_rows_ = Tensor();
    dropped_rows_ = Tensor();
  }
  Tensor pos_grad = pos_embed_.grad.reshape({all * width});
  be.sum_rows(d.reshape({n, all * width}), pos_grad);
  be.sum_rows(d, patch_bias_.grad);
  patch_.backward(d.reshape({n, grid_, grid_, width}), /*need_input_grad=*/false);
}

GraphValue VisionTransformer::trace(InferenceGraph& graph, GraphValue images) const {
  Backend& be = *ctx_.backend;
  const NamedTensor patch_bias = torch_named_value(be, patch_bias_);
  GraphValue x = graph.tokens(patch_.trace(graph, images, &patch_bias));
  x = graph.add_parameter(x, torch_named_value(be, pos_embed_));
  for (const auto& block : blocks_) x = block->trace(graph, x);
  // In inference nothing is masked: mask_token is not used.
  x = graph.flatten(norm_.trace(graph, x));
  x = feature1_.trace(graph, feature0_.trace(graph, x));
  return feature3_.trace(graph, feature2_.trace(graph, x));
}

void VisionTransformer::initialize(std::uint64_t seed) {
  const double patch_bound = 1.0 / std::sqrt(3.0 * static_cast<double>(options_.patch_size *
                                                                       options_.patch_size));
  for (Parameter* p : parameters_) {
    std::optional<Tensor> host = initial_values_buffer(*ctx_.backend, *p);
    if (!host) continue;
    float* v = host->data<float>();
    const std::int64_t count = host->numel();
    const std::uint64_t key = stream_key(seed, p->name);
    const std::string& name = p->name;
    const bool is_bias = name.ends_with(".bias");
    const bool is_norm_scale = name.ends_with(".weight") &&
                               (name.find("norm") != std::string::npos ||
                                name == "feature.1.weight" || name == "feature.3.weight");
    if (name.starts_with("patch_embed.proj.")) {
      for (std::int64_t i = 0; i < count; ++i)
        v[i] = static_cast<float>(patch_bound * (2.0 * uniform53(key, i) - 1.0));
    } else if (is_bias) {
      std::fill(v, v + count, 0.0f);
    } else if (is_norm_scale) {
      std::fill(v, v + count, 1.0f);
    } else {
      // Linear weights, pos_embed and mask_token.
      for (std::int64_t i = 0; i < count; ++i)
        v[i] = std::clamp(normal_value(key, i, 0.02), -2.0f, 2.0f);
    }
    ctx_.backend->copy_cast(*host, p->value);
  }
  for (Buffer* b : buffers_) ctx_.backend->fill(b->value, b->name.ends_with("_var") ? 1.0 : 0.0);
  refresh_working_copies();
}

std::string VisionTransformer::describe() const {
  return fmt::format(
      "Vision Transformer: embed {}, depth {}, {} heads, {}x{} patches, mask_ratio {}, "
      "drop_path_rate {}{}, embedding {}, {}x{} images",
      options_.embed_dim, options_.depth, options_.num_heads, options_.patch_size,
      options_.patch_size, options_.mask_ratio, options_.drop_path_rate,
      options_.checkpoint ? ", activation checkpointing" : "", options_.embedding_size,
      options_.image_size, options_.image_size);
}

}  // namespace pfc
