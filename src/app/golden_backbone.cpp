#include "app/golden_backbone.h"

#include <cmath>
#include <optional>

#include "model/make_backbone.h"
#include "model/vision_transformer.h"

namespace pfc {

namespace {

// A bias that feeds a later batch-norm (bn3 before the residual sum, bn2 and fc before
// `features`) has a true gradient of exactly zero: the shift is normalised away, and what is
// left in both files is rounding noise of the size of the layer's other gradients. Such a
// bias is measured against the L2 of its sibling weight's gradient; 0 means "use its own".
double cancellation_scale(const GoldenFile& file, const std::string& group,
                          const std::string& case_name, const std::string& name,
                          const GoldenReference& ref) {
  const std::string suffix = ".bias";
  if (!name.ends_with(suffix)) return 0;
  const std::string weight_name = name.substr(0, name.size() - suffix.size()) + ".weight";
  const auto weight = file.reference(group, case_name, "grads/" + weight_name);
  if (!weight || weight->l2 <= 0) return 0;
  return ref.l2 < 1e-4 * weight->l2 ? weight->l2 : 0;
}

}  // namespace

Tensor to_host_f64(Backend& backend, const Tensor& t) {
  Tensor host = Tensor::host(t.shape(), DType::f64);
  backend.copy_cast(t, host);
  return host;
}

// The note of a sampled comparison carries the whole tensor's L2 against the file's.
void compare_reference(GoldenTable& table, const std::string& name, const Tensor& ours,
                       const GoldenReference& ref, double scale) {
  const double* v = ours.data<double>();
  PFC_CHECK((ref.values.numel() - 1) * ref.stride < ours.numel(),
            "{}: the reference holds {} values, every {}th of {}; ours has {}", name,
            ref.values.numel(), ref.stride, ref.values.numel() * ref.stride, ours.numel());
  if (ref.stride == 1) {
    PFC_CHECK(ref.values.numel() == ours.numel(), "{}: the reference holds {} values, ours {}",
              name, ref.values.numel(), ours.numel());
    const std::string note =
        scale > 0 ? fmt::format("true value 0: error vs |grad weight| {:.2e}", scale) : "";
    table.compare(name, v, ref.values.data<double>(), ours.numel(), ref.torch, note, scale);
    return;
  }
  std::vector<double> picked(static_cast<std::size_t>(ref.values.numel()));
  double l2 = 0;
  for (std::int64_t i = 0; i < ours.numel(); ++i) l2 += v[i] * v[i];
  for (std::size_t i = 0; i < picked.size(); ++i)
    picked[i] = v[static_cast<std::int64_t>(i) * ref.stride];
  table.compare(name + ".sampled", picked.data(), ref.values.data<double>(),
                ref.values.numel(), ref.torch,
                fmt::format("every {}th; L2 rel.err {:.1e}", ref.stride,
                            std::fabs(std::sqrt(l2) - ref.l2) / ref.l2));
}

Tensor nchw_to_nhwc(const Tensor& nchw) {
  const std::int64_t n = nchw.dim(0), c = nchw.dim(1), h = nchw.dim(2), w = nchw.dim(3);
  Tensor nhwc = Tensor::host({n, h, w, c}, DType::f32);
  const float* src = nchw.data<float>();
  float* dst = nhwc.data<float>();
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x)
          dst[((b * h + y) * w + x) * c + ch] = src[((b * c + ch) * h + y) * w + x];
  return nhwc;
}

Tensor golden_images(Backend& backend, const Tensor& nchw) {
  const Tensor nhwc = nchw_to_nhwc(nchw);
  Tensor images = backend.empty(nhwc.shape(), DType::f32, MemoryPurpose::data);
  backend.copy(nhwc, images);
  return images;
}

std::unique_ptr<Backbone> golden_backbone(const GoldenFile& file, const GoldenNetwork& network,
                                          Backend& backend, DType activations) {
  Config cfg;
  cfg.network = network.network;
  cfg.layers = network.layers;
  cfg.image_size = network.image_size;
  cfg.embedding_size = network.embedding_size;
  if (network.embed_dim > 0) {
    // A Vision Transformer, arcface_torch's own or "custom", from the group's attributes.
    cfg.network = "vit";
    cfg.embed_dim = network.embed_dim;
    cfg.depth = network.depth;
    cfg.num_heads = network.num_heads;
    cfg.mask_ratio = network.mask_ratio;
    cfg.drop_path_rate = network.drop_path_rate;
    cfg.using_checkpoint = false;
  }
  auto model = make_backbone(cfg, backend, activations);
  for (const std::string& name : file.parameter_names(network.group))
    model->import_parameter(name, file.parameter(network.group, name));
  for (const Parameter* p : model->parameters()) {
    const bool listed = file.has(network.group + "/params/" + p->name);
    PFC_CHECK(listed || !p->trainable, "golden file lists no parameter '{}' for {}", p->name,
              network.group);
  }
  return model;
}

void check_golden_backbone(const GoldenFile& file, const GoldenNetwork& network,
                           const GoldenCase& golden_case, Backend& backend,
                           DType activations, GoldenTable& table) {
  const std::string case_group = network.group + "/" + golden_case.name;
  // A Vision Transformer's case either replays the draws it recorded or draws nothing: its
  // unmasked case ran without masking and DropPath.
  const std::optional<GoldenVitDraws> draws = file.vit_draws(network.group, golden_case.name);
  GoldenNetwork built = network;
  if (!draws) {
    built.mask_ratio = 0;
    built.drop_path_rate = 0;
  }
  const std::unique_ptr<Backbone> owned = golden_backbone(file, built, backend, activations);
  Backbone& model = *owned;
  if (draws) {
    auto* vit = dynamic_cast<VisionTransformer*>(&model);
    PFC_CHECK(vit != nullptr, "{} records a Vision Transformer's draws, but {} is none",
              case_group, network.group);
    vit->replay_draws({draws->mask_noise, draws->drop_path_keep});
  }

  const Tensor input = file.input(network.group);
  const Tensor filled = golden_fill("input", input.shape(), 0.0, 1.0);
  table.compare("input (fill rule)", to_host_f64(backend, filled).data<double>(),
                to_host_f64(backend, input).data<double>(), input.numel(), {});

  const Tensor images = golden_images(backend, input);
  const Tensor embeddings = to_host_f64(backend, model.forward(images, ForwardMode::training));
  if (auto ref = file.reference(network.group, golden_case.name, "embeddings"))
    compare_reference(table, "embeddings", embeddings, *ref);

  const auto grad_ref = file.reference(network.group, golden_case.name, "embeddings_grad");
  if (!file.has(case_group + "/grads")) {
    table.skip("backbone gradients", "this case stores none");
    return;
  }
  PFC_CHECK(grad_ref.has_value(), "{} has gradients but no embeddings_grad", case_group);
  // The stored (exact) gradient in the head's type: f64 in an f64 run, rounded once to f32
  // otherwise.
  Tensor embeddings_grad = backend.empty(grad_ref->values.shape(), model.master_dtype(),
                                         MemoryPurpose::gradients);
  backend.copy_cast(grad_ref->values, embeddings_grad);
  // In f16 the backward pass runs on a scaled loss, as in training (the trainer's dynamic
  // scale for 128 per GPU ranges over 128 ... 16384): unscaled, the gradients deep in r50 sink
  // into f16's subnormals. A power of two, so the unscaling is exact.
  const bool scaled = activations == DType::f16;
  constexpr double kLossScale = 1024.0;
  if (scaled) backend.scale(embeddings_grad, kLossScale);
  model.backward(embeddings_grad);

  for (Parameter* p : model.parameters()) {
    if (scaled && p->trainable) backend.scale(p->grad, 1.0 / kLossScale);
    const auto ref = file.reference(network.group, golden_case.name, "grads/" + p->name);
    if (!ref) {
      if (p->trainable) table.skip("grad " + p->name, "not in the file");
      continue;
    }
    compare_reference(table, "grad " + p->name,
                      to_host_f64(backend, model.export_parameter(*p, p->grad)), *ref,
                      cancellation_scale(file, network.group, golden_case.name, p->name, *ref));
  }
  for (const Buffer* b : model.buffers()) {
    const auto ref = file.reference(network.group, golden_case.name, "running_stats/" + b->name);
    if (!ref) continue;
    compare_reference(table, b->name, to_host_f64(backend, b->value), *ref);
  }
  // The inference forward (model.eval()): every batch-norm on the running statistics above.
  if (auto ref = file.reference(network.group, golden_case.name, "eval_embeddings"))
    compare_reference(table, "eval_embeddings",
                      to_host_f64(backend, model.forward(images, ForwardMode::inference)), *ref);
}

}  // namespace pfc
