// CPU convolution: NHWC activations, OHWI filters, any square kernel, stride, padding and
// group count. Each is a GEMM per group over an im2col matrix whose row is one output pixel
// and whose columns are (group, kh, kw, c): group g's (kh, kw, c) block sits at column
// g * K*K*Cg, in the filter's own order, so the OHWI filter rows of group g are already that
// GEMM's [out/groups, K*K*Cg] operand and the group's A operand is the block read with the
// whole row as leading dimension. Images are processed in chunks that bound the im2col buffer.
// The forward pass of f32 tensors is computed in f64 (see in_f64). These loops are the f64 path
// and the oracle; f32 convolutions, and bf16 ones writing f32, run on oneDNN where it is built
// in and takes the shape (onednn_conv2d.h), unless the backend was asked for the reference
// (CpuConvolutions). bf16 operands oneDNN does not take are widened to f32 (exactly, and the
// product of two bf16 values is exact in f32) and computed as f32 operands are.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kernel_support.h"
#include "backend/cpu/onednn_conv2d.h"
#include "backend/operand_checks.h"

namespace pfc {
namespace {

// Elements of im2col scratch per chunk (32 MiB of f32); a chunk holds at least one image.
// It takes one image of r50's largest 3x3 convolution (112x112x64), whose 12544 GEMM rows
// are plenty for OpenBLAS to run at full speed.
constexpr std::int64_t kColumnBudget = std::int64_t{8} << 20;

struct ConvDims {
  std::int64_t oh, ow, pixels_in, pixels_out;
  std::int64_t in_group, out_group;  // channels per group (Cg in, out / groups)
  std::int64_t group_patch;          // K*K*Cg: one group's GEMM depth
  std::int64_t patch;                // K*K*C: an im2col row (every group's block)
  bool direct;  // 1x1, stride 1, pad 0: the input already is the im2col matrix

  explicit ConvDims(const Conv2dGeometry& g)
      : oh(g.out_h()),
        ow(g.out_w()),
        pixels_in(g.in_h * g.in_w),
        pixels_out(oh * ow),
        in_group(g.in_per_group()),
        out_group(g.out_per_group()),
        group_patch(g.kernel * g.kernel * in_group),
        patch(g.kernel * g.kernel * g.in_channels),
        direct(g.kernel == 1 && g.stride == 1 && g.pad == 0) {}

  std::int64_t images_per_chunk(std::int64_t batch) const {
    const std::int64_t per_image = std::max<std::int64_t>(1, pixels_out * patch);
    return std::clamp<std::int64_t>(kColumnBudget / per_image, 1, std::max<std::int64_t>(batch, 1));
  }
};

// Elements of im2col scratch for `images` images (none for a direct convolution).
std::int64_t scratch_elements(const ConvDims& d, std::int64_t images) {
  return d.direct ? 0 : images * d.pixels_out * d.patch;
}

// Uninitialised scratch: im2col writes every element before it is read.
template <class T>
std::unique_ptr<T[]> scratch(const ConvDims& d, std::int64_t images) {
  if (d.direct) return nullptr;
  return std::unique_ptr<T[]>(new T[static_cast<std::size_t>(scratch_elements(d, images))]);
}

// col [images * pixels_out, patch] from x [images, H, W, C]; padding reads as zero. A row
// holds, for each group, its K*K runs of Cg channels.
template <class T>
void im2col(const Conv2dGeometry& g, const ConvDims& d, const T* x, std::int64_t images, T* col) {
  const std::int64_t c = g.in_channels, cg = d.in_group, k = g.kernel;
  const std::size_t run = static_cast<std::size_t>(cg) * sizeof(T);
  for (std::int64_t n = 0; n < images; ++n) {
    const T* xn = x + n * d.pixels_in * c;
    for (std::int64_t oy = 0; oy < d.oh; ++oy) {
      for (std::int64_t ox = 0; ox < d.ow; ++ox) {
        T* row = col + ((n * d.oh + oy) * d.ow + ox) * d.patch;
        for (std::int64_t grp = 0; grp < g.groups; ++grp) {
          for (std::int64_t ky = 0; ky < k; ++ky) {
            const std::int64_t iy = oy * g.stride - g.pad + ky;
            for (std::int64_t kx = 0; kx < k; ++kx) {
              const std::int64_t ix = ox * g.stride - g.pad + kx;
              T* dst = row + grp * d.group_patch + (ky * k + kx) * cg;
              if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) {
                std::memset(dst, 0, run);
              } else {
                std::memcpy(dst, xn + (iy * g.in_w + ix) * c + grp * cg, run);
              }
            }
          }
        }
      }
    }
  }
}

// dx [images, H, W, C] = the sum of every col entry into the input pixel it was read from.
template <class T>
void col2im(const Conv2dGeometry& g, const ConvDims& d, const T* col, std::int64_t images, T* dx) {
  const std::int64_t c = g.in_channels, cg = d.in_group, k = g.kernel;
  std::fill(dx, dx + images * d.pixels_in * c, T(0));
  for (std::int64_t n = 0; n < images; ++n) {
    T* dxn = dx + n * d.pixels_in * c;
    for (std::int64_t oy = 0; oy < d.oh; ++oy) {
      for (std::int64_t ox = 0; ox < d.ow; ++ox) {
        const T* row = col + ((n * d.oh + oy) * d.ow + ox) * d.patch;
        for (std::int64_t grp = 0; grp < g.groups; ++grp) {
          for (std::int64_t ky = 0; ky < k; ++ky) {
            const std::int64_t iy = oy * g.stride - g.pad + ky;
            if (iy < 0 || iy >= g.in_h) continue;
            for (std::int64_t kx = 0; kx < k; ++kx) {
              const std::int64_t ix = ox * g.stride - g.pad + kx;
              if (ix < 0 || ix >= g.in_w) continue;
              const T* src = row + grp * d.group_patch + (ky * k + kx) * cg;
              T* dst = dxn + (iy * g.in_w + ix) * c + grp * cg;
              for (std::int64_t ch = 0; ch < cg; ++ch) dst[ch] += src[ch];
            }
          }
        }
      }
    }
  }
}

// In both layouts (im2col rows, or the input itself when direct) group g's block of a row
// starts group_patch * g elements in, and a row is `patch` long.
template <class T>
void forward(const Conv2dGeometry& g, const T* x, const T* w, T* y) {
  const ConvDims d(g);
  const std::int64_t chunk = d.images_per_chunk(g.batch);
  const std::unique_ptr<T[]> col = scratch<T>(d, chunk);
  for (std::int64_t n0 = 0; n0 < g.batch; n0 += chunk) {
    const std::int64_t images = std::min(chunk, g.batch - n0);
    const T* a = x + n0 * d.pixels_in * g.in_channels;
    if (!d.direct) {
      im2col(g, d, a, images, col.get());
      a = col.get();
    }
    T* ys = y + n0 * d.pixels_out * g.out_channels;
    // y_g [rows, out_g] = col_g [rows, K*K*Cg] * w_g^T with w_g [out_g, K*K*Cg]
    for (std::int64_t grp = 0; grp < g.groups; ++grp)
      cpu::blas_gemm(false, true, images * d.pixels_out, d.out_group, d.group_patch, T(1),
                     a + grp * d.group_patch, d.patch, w + grp * d.out_group * d.group_patch,
                     d.group_patch, T(0), ys + grp * d.out_group, g.out_channels);
  }
}

template <class T>
void backward_data(const Conv2dGeometry& g, const T* dy, const T* w, T* dx) {
  const ConvDims d(g);
  const std::int64_t chunk = d.images_per_chunk(g.batch);
  const std::unique_ptr<T[]> col = scratch<T>(d, chunk);
  for (std::int64_t n0 = 0; n0 < g.batch; n0 += chunk) {
    const std::int64_t images = std::min(chunk, g.batch - n0);
    T* dxs = dx + n0 * d.pixels_in * g.in_channels;
    T* dcol = d.direct ? dxs : col.get();
    const T* dys = dy + n0 * d.pixels_out * g.out_channels;
    // dcol_g [rows, K*K*Cg] = dy_g [rows, out_g] * w_g [out_g, K*K*Cg]
    for (std::int64_t grp = 0; grp < g.groups; ++grp)
      cpu::blas_gemm(false, false, images * d.pixels_out, d.group_patch, d.out_group, T(1),
                     dys + grp * d.out_group, g.out_channels,
                     w + grp * d.out_group * d.group_patch, d.group_patch, T(0),
                     dcol + grp * d.group_patch, d.patch);
    if (!d.direct) col2im(g, d, dcol, images, dxs);
  }
}

template <class T>
void backward_filter(const Conv2dGeometry& g, const T* x, const T* dy, T* dw) {
  const ConvDims d(g);
  if (g.batch == 0) {
    std::fill(dw, dw + g.out_channels * d.group_patch, T(0));
    return;
  }
  const std::int64_t chunk = d.images_per_chunk(g.batch);
  const std::unique_ptr<T[]> col = scratch<T>(d, chunk);
  for (std::int64_t n0 = 0; n0 < g.batch; n0 += chunk) {
    const std::int64_t images = std::min(chunk, g.batch - n0);
    const T* b = x + n0 * d.pixels_in * g.in_channels;
    if (!d.direct) {
      im2col(g, d, b, images, col.get());
      b = col.get();
    }
    const T* dys = dy + n0 * d.pixels_out * g.out_channels;
    // dw_g [out_g, K*K*Cg] (+)= dy_g^T [out_g, rows] * col_g [rows, K*K*Cg]
    for (std::int64_t grp = 0; grp < g.groups; ++grp)
      cpu::blas_gemm(true, false, d.out_group, d.group_patch, images * d.pixels_out, T(1),
                     dys + grp * d.out_group, g.out_channels, b + grp * d.group_patch, d.patch,
                     T(n0 == 0 ? 0 : 1), dw + grp * d.out_group * d.group_patch, d.group_patch);
  }
}

// Runs `conv` on f64 copies of f32 operands and rounds its output to f32 once; the forward
// pass uses it. With f32 forward GEMMs, the tiny network's stem and layer1 gradients (sums
// over 112x112 maps that nearly cancel) ended up to 1.4e-3 from both arcface_torch's golden
// values and an f64 run (pfc golden --precision fp64); with f64 ones, within 3.5e-5. The
// backward GEMMs in f64 changed no gradient measurably, so they stay in the tensors' type.
template <class Conv>
void in_f64(const Tensor& a, const Tensor& b, Tensor& out, Conv conv) {
  const std::vector<double> a64(a.data<float>(), a.data<float>() + a.numel());
  const std::vector<double> b64(b.data<float>(), b.data<float>() + b.numel());
  std::vector<double> out64(static_cast<std::size_t>(out.numel()));
  conv(a64.data(), b64.data(), out64.data());
  std::copy(out64.begin(), out64.end(), out.data<float>());
}

}  // namespace

const char* cpu::conv_direction_name(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::forward: return "conv2d_forward";
    case ConvDirection::backward_data: return "conv2d_backward_data";
    case ConvDirection::backward_filter: return "conv2d_backward_filter";
  }
  return "conv2d";
}

bool CpuBackend::conv2d_on_onednn(const Conv2dGeometry& g, cpu::ConvDirection direction,
                                  const Tensor& a, const Tensor& b, Tensor& out,
                                  const Tensor* filter) {
  const DType operands = a.dtype();
  if ((operands != DType::f32 && operands != DType::bf16) ||
      convolutions_ != CpuConvolutions::onednn)
    return false;
  const std::optional<std::int64_t> bytes =
      cpu::onednn_conv2d_workspace_bytes(g, direction, operands);
  if (!bytes) return false;
  Tensor workspace = Tensor::empty({*bytes}, DType::u8, allocator_, MemoryPurpose::workspace);
  // Only inference keeps prepared filters, and it convolves f32 operands here.
  const void* prepared = filter != nullptr && operands == DType::f32
                             ? prepared_filter(g, direction, *filter, workspace.raw())
                             : nullptr;
  cpu::onednn_conv2d(g, direction, operands, a.raw(), b.raw(), out.data<float>(),
                     workspace.raw(), prepared);
  return true;
}

const void* CpuBackend::prepared_filter(const Conv2dGeometry& g, cpu::ConvDirection direction,
                                        const Tensor& w, void* workspace) {
  return kept_filter(w, static_cast<int>(direction),
                     cpu::onednn_prepared_filter_layout(g, direction), [&](void* prepared) {
                       cpu::onednn_prepare_filter(g, direction, w.data<float>(), prepared,
                                                  workspace);
                     });
}

const void* CpuBackend::kept_filter(const Tensor& w, int use,
                                    const cpu::PreparedFilterLayout& layout,
                                    const std::function<void(void*)>& prepare) {
  if (!keep_prepared_filters_ || layout.bytes == 0) return nullptr;
  PreparedFilter& kept =
      prepared_filters_[PreparedFilterKey{w.storage_id(), w.storage_offset(), use}];
  if (kept.version == w.content_version() && kept.layout == layout.id) return kept.values.raw();
  if (!kept.values.defined() || kept.values.numel() != layout.bytes)
    kept.values = Tensor::empty({layout.bytes}, DType::u8, allocator_, MemoryPurpose::weights);
  prepare(kept.values.raw());
  kept.version = w.content_version();
  kept.layout = layout.id;
  return kept.values.raw();
}

void CpuBackend::conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                Tensor& y) {
  operand_check::conv2d_forward(rules_, g, x, w, y);
  if (conv2d_on_onednn(g, cpu::ConvDirection::forward, x, w, y, &w)) return;
  if (x.dtype() == DType::bf16) {
    conv2d_forward(g, widened(x), widened(w), y);
    return;
  }
  if (x.dtype() == DType::f32) {
    in_f64(x, w, y,
           [&](const double* xs, const double* ws, double* ys) { forward(g, xs, ws, ys); });
    return;
  }
  cpu::dispatch_float(x.dtype(), "conv2d_forward", "x", [&](auto tag) {
    using T = decltype(tag);
    forward(g, x.data<T>(), w.data<T>(), y.data<T>());
  });
}

void CpuBackend::conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                                      Tensor& dx) {
  operand_check::conv2d_backward_data(rules_, g, dy, w, dx);
  if (conv2d_on_onednn(g, cpu::ConvDirection::backward_data, dy, w, dx, &w)) return;
  if (dy.dtype() == DType::bf16) {
    conv2d_backward_data(g, widened(dy), widened(w), dx);
    return;
  }
  cpu::dispatch_float(dy.dtype(), "conv2d_backward_data", "dy", [&](auto tag) {
    using T = decltype(tag);
    backward_data(g, dy.data<T>(), w.data<T>(), dx.data<T>());
  });
}

void CpuBackend::conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                                        Tensor& dw) {
  operand_check::conv2d_backward_filter(rules_, g, x, dy, dw);
  if (conv2d_on_onednn(g, cpu::ConvDirection::backward_filter, x, dy, dw, nullptr)) return;
  if (x.dtype() == DType::bf16) {
    conv2d_backward_filter(g, widened(x), widened(dy), dw);
    return;
  }
  cpu::dispatch_float(x.dtype(), "conv2d_backward_filter", "x", [&](auto tag) {
    using T = decltype(tag);
    backward_filter(g, x.data<T>(), dy.data<T>(), dw.data<T>());
  });
}

std::int64_t conv2d_workspace_bytes(const Conv2dGeometry& g, DType dtype,
                                    cpu::ConvDirection direction) {
  if (dtype == DType::bf16) {
    if (const auto bytes = cpu::onednn_conv2d_workspace_bytes(g, direction, dtype)) return *bytes;
    return conv2d_workspace_bytes(g, DType::f32, direction);
  }
  if (dtype != DType::f32) return 0;
  return cpu::onednn_conv2d_workspace_bytes(g, direction).value_or(0);
}

std::int64_t conv2d_host_scratch_bytes(const Conv2dGeometry& g, DType dtype,
                                       cpu::ConvDirection direction) {
  if (dtype == DType::bf16) {
    if (cpu::onednn_conv2d_workspace_bytes(g, direction, dtype)) return 0;
    // The two operands widened to f32, beside what the f32 convolution takes.
    const Shape out = direction == cpu::ConvDirection::backward_data ? g.input_shape()
                      : direction == cpu::ConvDirection::forward     ? g.output_shape()
                                                                     : g.filter_shape();
    const std::int64_t operands = shape_numel(g.input_shape()) + shape_numel(g.output_shape()) +
                                  shape_numel(g.filter_shape()) - shape_numel(out);
    return operands * static_cast<std::int64_t>(sizeof(float)) +
           conv2d_host_scratch_bytes(g, DType::f32, direction);
  }
  if (dtype == DType::f32 && cpu::onednn_conv2d_workspace_bytes(g, direction)) return 0;
  const ConvDims d(g);
  const std::int64_t columns = scratch_elements(d, d.images_per_chunk(g.batch));
  if (direction != cpu::ConvDirection::forward || dtype != DType::f32)
    return columns * static_cast<std::int64_t>(dtype_size(dtype));
  // in_f64: f64 copies of x, w and y beside an f64 im2col chunk.
  const std::int64_t operands = shape_numel(g.input_shape()) + shape_numel(g.filter_shape()) +
                                shape_numel(g.output_shape());
  return (operands + columns) * static_cast<std::int64_t>(sizeof(double));
}

}  // namespace pfc
