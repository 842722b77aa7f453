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

template <class T>
void reorder_torch_to_ours(const Parameter& p, const T* torch_data, T* ours) {
  for_each_index_pair(p, [&](std::int64_t ti, std::int64_t oi) { ours[oi] = torch_data[ti]; });
}

template <class T>
void reorder_ours_to_torch(const Parameter& p, const T* ours, T* torch_data) {
  for_each_index_pair(p, [&](std::int64_t ti, std::int64_t oi) { torch_data[ti] = ours[oi]; });
}

}  // namespace

void torch_to_ours(const Parameter& p, const float* torch_data, float* ours) {
  reorder_torch_to_ours(p, torch_data, ours);
}
void torch_to_ours(const Parameter& p, const double* torch_data, double* ours) {
  reorder_torch_to_ours(p, torch_data, ours);
}
void ours_to_torch(const Parameter& p, const float* ours, float* torch_data) {
  reorder_ours_to_torch(p, ours, torch_data);
}
void ours_to_torch(const Parameter& p, const double* ours, double* torch_data) {
  reorder_ours_to_torch(p, ours, torch_data);
}

}  // namespace pfc

#include "backend/backend.h"
#include "core/host_cast.h"

namespace pfc {

Parameter create_parameter(Backend& backend, DType master, DType compute, std::string name,
                           Shape our_shape, Shape torch_shape, TorchLayout layout) {
  Parameter p;
  p.name = std::move(name);
  p.value = backend.zeros(our_shape, master, MemoryPurpose::weights);
  p.grad = backend.zeros(our_shape, master, MemoryPurpose::gradients);
  if (compute != master) p.working = backend.zeros(our_shape, compute, MemoryPurpose::weights);
  p.torch_shape = std::move(torch_shape);
  p.layout = layout;
  return p;
}

Tensor to_torch_layout(Backend& backend, const Parameter& p, const Tensor& ours) {
  const Tensor host = backend.to_host(ours);
  Tensor torch_layout = Tensor::host(p.torch_shape, host.dtype());
  if (host.dtype() == DType::f64) {
    ours_to_torch(p, host.data<double>(), torch_layout.data<double>());
  } else {
    ours_to_torch(p, host.data<float>(), torch_layout.data<float>());
  }
  return torch_layout;
}

namespace {

// Named tensors are f32 (checkpoints, exporters): an f64 run's values are rounded once.
Tensor as_f32(const Tensor& host) {
  if (host.dtype() == DType::f32) return host;
  Tensor f32 = Tensor::host(host.shape(), DType::f32);
  host_cast(host, f32);
  return f32;
}

}  // namespace

NamedTensor torch_named_value(Backend& backend, const Parameter& p) {
  return {p.name, as_f32(to_torch_layout(backend, p, p.value))};
}

NamedTensor torch_named_value(Backend& backend, const Buffer& b) {
  return {b.name, as_f32(backend.to_host(b.value))};
}

Buffer create_buffer(Backend& backend, DType dtype, std::string name, Shape shape) {
  return Buffer{std::move(name), backend.zeros(shape, dtype, MemoryPurpose::weights)};
}

}  // namespace pfc
