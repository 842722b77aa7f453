#include "model/backbone.h"

#include "model/inference_network.h"

namespace pfc {

Parameter* Backbone::find_parameter(const std::string& name) const {
  for (Parameter* p : parameters())
    if (p->name == name) return p;
  return nullptr;
}

Buffer* Backbone::find_buffer(const std::string& name) const {
  for (Buffer* b : buffers())
    if (b->name == name) return b;
  return nullptr;
}

void Backbone::prepare_inference(InferencePrecision precision) {
  const bool fused = backend().fuses_inference() && master_dtype() == DType::f32;
  PFC_CHECK(fused || precision == InferencePrecision::f32,
            "bf16 inference runs on the CPU backend's fused f32 network only ({} backend, {} "
            "masters)",
            backend().name(), dtype_name(master_dtype()));
  prepared_.reset();
  if (fused) prepared_ = std::make_shared<InferenceNetwork>(*this, precision);
}

Tensor Backbone::infer(const Tensor& images) {
  return prepared_ ? prepared_->forward(images) : forward(images, ForwardMode::inference);
}

void Backbone::refresh_working_copies() {
  for (Parameter* p : parameters())
    if (p->working.defined()) backend().cast(p->value, p->working);
}

std::int64_t Backbone::parameter_count() const {
  std::int64_t n = 0;
  for (const Parameter* p : parameters()) n += p->value.numel();
  return n;
}

void Backbone::import_parameter(const std::string& name, const Tensor& torch_layout) {
  Parameter* p = find_parameter(name);
  PFC_CHECK(p != nullptr, "{} has no parameter '{}'", describe(), name);
  PFC_CHECK(torch_layout.shape() == p->torch_shape, "parameter '{}' is {} in PyTorch, got {}",
            name, shape_string(p->torch_shape), shape_string(torch_layout.shape()));
  PFC_CHECK(torch_layout.device() == DeviceKind::cpu, "parameter '{}': {} is not a host tensor",
            name, torch_layout.describe());
  Tensor ours = Tensor::host(p->value.shape(), torch_layout.dtype());
  if (torch_layout.dtype() == DType::f64) {
    torch_to_ours(*p, torch_layout.data<double>(), ours.data<double>());
  } else {
    torch_to_ours(*p, torch_layout.data<float>(), ours.data<float>());
  }
  backend().copy_cast(ours, p->value);
  if (p->working.defined()) backend().cast(p->value, p->working);
}

void Backbone::import_buffer(const std::string& name, const Tensor& values) {
  Buffer* b = find_buffer(name);
  PFC_CHECK(b != nullptr, "{} has no buffer '{}'", describe(), name);
  PFC_CHECK(values.shape() == b->value.shape(), "buffer '{}' is {}, got {}", name,
            shape_string(b->value.shape()), shape_string(values.shape()));
  backend().copy_cast(values, b->value);
}

Tensor Backbone::export_parameter(const Parameter& p, const Tensor& ours) const {
  return to_torch_layout(backend(), p, ours);
}

}  // namespace pfc
