// CpuBackend::conv2d_forward_fused: the inference convolution with its epilogue as one oneDNN
// primitive (onednn_fused_conv2d.h), its filter kept in the primitive's layout by an inference
// command; Backend's reference passes where oneDNN does not take it.
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/onednn_fused_conv2d.h"
#include "backend/operand_checks.h"

namespace pfc {

namespace {

// The kept-filter use of a fused convolution: after the three directions, one per variant
// (the epilogue does not change the filter's layout in oneDNN's kernels, but a plan is per
// variant, so it is part of the use as well).
int fused_use(const cpu::FusedConv& c) { return 3 + c.variant(); }

}  // namespace

void CpuBackend::conv2d_forward_fused(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                      const ConvEpilogue& epilogue, Tensor& y) {
  operand_check::conv2d_forward_fused(rules_, g, x, w, epilogue, y);
  const bool f64 = x.dtype() == DType::f64;
  cpu::FusedConv c{g,
                   w.dtype() == DType::bf16,
                   x.dtype() == DType::bf16,
                   y.dtype() == DType::bf16,
                   epilogue.bias != nullptr,
                   epilogue.prelu_slope != nullptr,
                   epilogue.relu6,
                   epilogue.accumulate};
  std::optional<std::int64_t> bytes;
  if (fuses_inference() && !f64) bytes = cpu::onednn_fused_conv2d_workspace_bytes(c);
  // A kernel without the activation post-ops (oneDNN 2.6's bf16 ones take no PReLU), the
  // activations then passes of their own over an f32 output: possible unless a sum follows
  // them.
  bool activation_passes = false;
  if (!bytes && (c.prelu || c.relu6) && !c.accumulate && fuses_inference() && !f64) {
    c.prelu = c.relu6 = false;
    c.bf16_output = false;
    bytes = cpu::onednn_fused_conv2d_workspace_bytes(c);
    activation_passes = bytes.has_value();
  }
  if (!bytes) {
    Backend::conv2d_forward_fused(g, x, w, epilogue, y);
    return;
  }
  Tensor workspace = Tensor::empty({*bytes}, DType::u8, allocator_, MemoryPurpose::workspace);
  const void* prepared =
      kept_filter(w, fused_use(c), cpu::onednn_fused_prepared_filter_layout(c),
                  [&](void* into) {
                    cpu::onednn_fused_prepare_filter(c, w.raw(), into, workspace.raw());
                  });
  // With activation passes, a bf16 y is rounded to after them.
  const bool rounded_after = activation_passes && y.dtype() != DType::f32;
  Tensor out = rounded_after
                   ? Tensor::empty(y.shape(), DType::f32, allocator_, MemoryPurpose::workspace)
                   : y;
  cpu::onednn_fused_conv2d(c, x.raw(), w.raw(),
                           c.bias ? epilogue.bias->data<float>() : nullptr,
                           c.prelu ? epilogue.prelu_slope->data<float>() : nullptr, out.raw(),
                           workspace.raw(), prepared);
  if (activation_passes) {
    Tensor rows = out.reshape({out.numel() / g.out_channels, g.out_channels});
    if (epilogue.prelu_slope != nullptr) prelu_forward(rows, *epilogue.prelu_slope, rows);
    if (epilogue.relu6) relu6_forward(rows, rows);
    if (rounded_after) cast(out, y);
  }
}

}  // namespace pfc
