#include "model/parameter.h"

namespace pfc {

namespace {

// The element offsets of a PyTorch-layout index in our layout, per layout kind.
template <class Visit>
void for_each_index_pair(const Parameter& p, Visit visit) {
  const Shape& t = p.torch_shape;
  switch (p.layout) {
    case TorchLayout::same: {
      const std::int64_t n = shape_numel(t);
      for (std::int64_t i = 0; i < n; ++i) visit(i, i);
      return;
    }
    case TorchLayout::conv_oihw: {  // torch [O, I, H, W] -> ours [O, H, W, I]
      const std::int64_t O = t[0], I = t[1], H = t[2], W = t[3];
      for (std::int64_t o = 0; o < O; ++o)
        for (std::int64_t i = 0; i < I; ++i)
          for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t w = 0; w < W; ++w)
              visit(((o * I + i) * H + h) * W + w, ((o * H + h) * W + w) * I + i);
      return;
    }
    case TorchLayout::linear_from_nchw: {  // columns c*HW + s -> s*C + c
      const std::int64_t out = t[0], C = p.feature_channels, HW = p.feature_hw;
      for (std::int64_t r = 0; r < out; ++r)
        for (std::int64_t c = 0; c < C; ++c)
          for (std::int64_t s = 0; s < HW; ++s)
            visit(r * C * HW + c * HW + s, r * C * HW + s * C + c);
      return;
    }
  }
}

}  // namespace

void torch_to_ours(const Parameter& p, const float* torch_data, float* ours) {
  for_each_index_pair(p, [&](std::int64_t ti, std::int64_t oi) { ours[oi] = torch_data[ti]; });
}

void ours_to_torch(const Parameter& p, const float* ours, float* torch_data) {
  for_each_index_pair(p, [&](std::int64_t ti, std::int64_t oi) { torch_data[ti] = ours[oi]; });
}

}  // namespace pfc

#include "backend/backend.h"

namespace pfc {

Parameter create_parameter(Backend& backend, DType working, std::string name, Shape our_shape,
                           Shape torch_shape, TorchLayout layout) {
  Parameter p;
  p.name = std::move(name);
  p.value = backend.zeros(our_shape, DType::f32, MemoryPurpose::weights);
  p.grad = backend.zeros(our_shape, DType::f32, MemoryPurpose::gradients);
  if (working != DType::f32) p.working = backend.zeros(our_shape, working, MemoryPurpose::weights);
  p.torch_shape = std::move(torch_shape);
  p.layout = layout;
  return p;
}

Tensor to_torch_layout(Backend& backend, const Parameter& p, const Tensor& ours) {
  const Tensor host = backend.to_host(ours);
  Tensor torch_layout = Tensor::host(p.torch_shape, DType::f32);
  ours_to_torch(p, host.data<float>(), torch_layout.data<float>());
  return torch_layout;
}

NamedTensor torch_named_value(Backend& backend, const Parameter& p) {
  return {p.name, to_torch_layout(backend, p, p.value)};
}

NamedTensor torch_named_value(Backend& backend, const Buffer& b) {
  return {b.name, backend.to_host(b.value)};
}

Buffer create_buffer(Backend& backend, std::string name, Shape shape) {
  return Buffer{std::move(name), backend.zeros(shape, DType::f32, MemoryPurpose::weights)};
}

}  // namespace pfc
