// oneDNN convolutions for the CPU backend (see onednn_conv2d.h). Activations stay NHWC and
// filters OHWI (GOHWI when grouped) at the interface; oneDNN picks its own filter layout
// (format "any"), into which the filter is reordered before the forward and backward-data
// passes and out of which the filter gradient is reordered after backward-filter. The
// primitives run with a user-managed scratchpad, carved from the caller's workspace after the
// reordered filter.
#include "backend/cpu/onednn_conv2d.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "backend/cpu/onednn/onednn_engine.h"

namespace pfc::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

// The byte offset of the scratchpad in the workspace: after the reordered filter, kept at
// oneDNN's preferred 64-byte alignment.
std::int64_t aligned(std::int64_t bytes) { return (bytes + 63) / 64 * 64; }

using dt = memory::data_type;

// The element types of a direction's three tensors: the input side (x, or dx), the filter (w,
// or dw) and the output side (y, or dy). With bf16 operands the two tensors a direction reads
// are bf16 and the one it writes is f32.
struct ConvTypes {
  dt input = dt::f32, filter = dt::f32, output = dt::f32;
};

ConvTypes conv_types(ConvDirection direction, bool bf16) {
  if (!bf16) return {};
  switch (direction) {
    case ConvDirection::forward: return {dt::bf16, dt::bf16, dt::f32};
    case ConvDirection::backward_data: return {dt::f32, dt::bf16, dt::bf16};
    case ConvDirection::backward_filter: return {dt::bf16, dt::f32, dt::bf16};
  }
  return {};
}

memory::desc activation_desc(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w,
                             dt type) {
  return memory::desc({n, c, h, w}, type, tag::nhwc);
}

// pfc's filter [out, k, k, in / groups] as oneDNN sees it: OIHW dims in OHWI order, or with a
// leading group dimension.
memory::desc user_filter_desc(const Conv2dGeometry& g, tag format, dt type) {
  if (g.groups == 1)
    return memory::desc({g.out_channels, g.in_channels, g.kernel, g.kernel}, type,
                        format == tag::any ? tag::any : tag::ohwi);
  return memory::desc({g.groups, g.out_per_group(), g.in_per_group(), g.kernel, g.kernel}, type,
                      format == tag::any ? tag::any : tag::gohwi);
}

memory::desc input_desc(const Conv2dGeometry& g, dt type) {
  return activation_desc(g.batch, g.in_channels, g.in_h, g.in_w, type);
}
memory::desc output_desc(const Conv2dGeometry& g, dt type) {
  return activation_desc(g.batch, g.out_channels, g.out_h(), g.out_w(), type);
}

// The padding on both sides, as pfc's (and PyTorch's) convolution pads: oneDNN's output size
// (in + 2 pad - k) / stride + 1 rounds down exactly as pfc's does.
memory::dims padding(const Conv2dGeometry& g) { return {g.pad, g.pad}; }

dnnl::convolution_forward::desc forward_desc(const Conv2dGeometry& g, const ConvTypes& t) {
  return dnnl::convolution_forward::desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
      input_desc(g, t.input), user_filter_desc(g, tag::any, t.filter), output_desc(g, t.output),
      {g.stride, g.stride}, padding(g), padding(g));
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// One direction of one shape, set up: the primitive, the filter layout it works in and the
// reorder to or from pfc's layout (none when they agree), and the workspace it takes.
struct ConvPlan {
  dnnl::primitive conv;
  memory::desc filter;        // the filter (or its gradient) as the primitive wants it
  memory::desc user_filter;   // pfc's OHWI filter
  std::optional<dnnl::reorder> filter_reorder;
  std::int64_t filter_bytes = 0;  // of the reordered filter in the workspace (0: none)
  std::int64_t scratch_bytes = 0;
  std::int64_t workspace_bytes() const { return aligned(filter_bytes) + scratch_bytes; }
};

// oneDNN's implementations named "ref" are its plain loops, far slower than pfc's reference.
bool is_reference_kernel(const std::string& impl) { return impl.rfind("ref", 0) == 0; }

std::string describe(const Conv2dGeometry& g, bool bf16) {
  return fmt::format("{}x [{}, {}, {}, {}], filter [{}, {}, {}, {}], stride {}, pad {}, groups {}",
                     bf16 ? "bf16 " : "", g.batch, g.in_h, g.in_w, g.in_channels,
                     g.out_channels, g.kernel, g.kernel, g.in_per_group(), g.stride, g.pad,
                     g.groups);
}

// The primitive of a backward direction, described as the forward pass `hint` it follows.
template <class Primitive>
typename Primitive::primitive_desc backward_desc(const Conv2dGeometry& g, const ConvTypes& t,
                                                 const dnnl::primitive_attr& attr,
                                                 const dnnl::convolution_forward::primitive_desc& hint) {
  const typename Primitive::desc d(dnnl::algorithm::convolution_direct, input_desc(g, t.input),
                                   user_filter_desc(g, tag::any, t.filter),
                                   output_desc(g, t.output), {g.stride, g.stride}, padding(g),
                                   padding(g));
  return typename Primitive::primitive_desc(d, attr, onednn_engine(), hint);
}

// Fills the plan's primitive, filter layout and scratchpad from a primitive descriptor; the
// name of the implementation oneDNN chose.
template <class Primitive>
std::string take(const typename Primitive::primitive_desc& pd, const memory::desc& filter,
                 ConvPlan& plan) {
  plan.filter = filter;
  plan.scratch_bytes = static_cast<std::int64_t>(pd.scratchpad_desc().get_size());
  plan.conv = Primitive(pd);
  return pd.impl_info_str();
}

// oneDNN 2.6 counts the pixels of a plane in 32 bits: at 65536 x 65536 (2^32) its primitive
// set-up divides by zero (SIGFPE, seen planning image_size = 65536). Larger planes than 2^31
// pixels are left to the reference.
bool plane_fits_onednn(const Conv2dGeometry& g) {
  constexpr std::int64_t kMostPixels = std::int64_t{1} << 31;
  return g.in_h * g.in_w < kMostPixels && g.out_h() * g.out_w() < kMostPixels;
}

std::optional<ConvPlan> make_plan(const Conv2dGeometry& g, ConvDirection direction, bool bf16) {
  if (!plane_fits_onednn(g)) {
    spdlog::warn("{}: {} has planes of 2^31 pixels or more, beyond oneDNN's 32-bit pixel "
                 "counts; pfc's reference convolution runs it",
                 conv_direction_name(direction), describe(g, bf16));
    return std::nullopt;
  }
  if (!onednn_trusted_shape(g)) {
    // Said once per process: only small test networks have such shapes, each in three
    // directions, and the reference computes them correctly.
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      spdlog::info("{}: {} and any other strided 1x1 convolution whose channel counts are not "
                   "multiples of 16 run on pfc's reference convolution (oneDNN's kernels for "
                   "them are not trusted)",
                   conv_direction_name(direction), describe(g, bf16));
    return std::nullopt;
  }
  const dnnl::engine& engine = onednn_engine();
  const dnnl::primitive_attr attr = user_scratchpad();
  const ConvTypes types = conv_types(direction, bf16);
  const dnnl::convolution_forward::primitive_desc forward(
      forward_desc(g, conv_types(ConvDirection::forward, bf16)), attr, engine);
  ConvPlan plan;
  plan.user_filter = user_filter_desc(g, tag::undef, types.filter);
  std::string impl;
  switch (direction) {
    case ConvDirection::forward:
      impl = take<dnnl::convolution_forward>(forward, forward.weights_desc(), plan);
      break;
    case ConvDirection::backward_data: {
      const auto pd = backward_desc<dnnl::convolution_backward_data>(g, types, attr, forward);
      impl = take<dnnl::convolution_backward_data>(pd, pd.weights_desc(), plan);
      break;
    }
    case ConvDirection::backward_filter: {
      const auto pd = backward_desc<dnnl::convolution_backward_weights>(g, types, attr, forward);
      impl = take<dnnl::convolution_backward_weights>(pd, pd.diff_weights_desc(), plan);
      break;
    }
  }
  if (is_reference_kernel(impl)) {
    spdlog::warn("{}: oneDNN offers only its reference kernel ({}) for {}; pfc's reference "
                 "convolution runs it",
                 conv_direction_name(direction), impl, describe(g, bf16));
    return std::nullopt;
  }
  if (plan.filter != plan.user_filter) {
    const bool into_primitive = direction != ConvDirection::backward_filter;
    const memory::desc& from = into_primitive ? plan.user_filter : plan.filter;
    const memory::desc& to = into_primitive ? plan.filter : plan.user_filter;
    const dnnl::reorder::primitive_desc reorder(engine, from, engine, to, attr);
    plan.filter_reorder = dnnl::reorder(reorder);
    plan.filter_bytes = static_cast<std::int64_t>(plan.filter.get_size());
    plan.scratch_bytes = std::max(plan.scratch_bytes,
                                  static_cast<std::int64_t>(reorder.scratchpad_desc().get_size()));
  }
  return plan;
}

using PlanKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                           std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, bool>;

PlanKey key_of(const Conv2dGeometry& g, ConvDirection direction, bool bf16) {
  return {g.batch,  g.in_h,   g.in_w, g.in_channels, g.out_channels,
          g.kernel, g.stride, g.pad,  g.groups,      static_cast<int>(direction), bf16};
}

// The plan's scratchpad: the part of the workspace after the reordered filter.
memory scratchpad(const ConvPlan& plan, char* workspace) {
  return memory(memory::desc({plan.scratch_bytes}, memory::data_type::u8, tag::a),
                onednn_engine(), workspace + aligned(plan.filter_bytes));
}

// Plans by shape, direction and operand type; nullopt where the reference runs the shape.
const std::optional<ConvPlan>& cached_plan(const Conv2dGeometry& g, ConvDirection direction,
                                           bool bf16) {
  static std::mutex mutex;
  static std::map<PlanKey, std::optional<ConvPlan>> plans;
  const std::lock_guard<std::mutex> lock(mutex);
  const PlanKey key = key_of(g, direction, bf16);
  auto found = plans.find(key);
  if (found != plans.end()) return found->second;
  std::optional<ConvPlan> plan;
  if (g.batch > 0) {
    try {
      plan = make_plan(g, direction, bf16);
    } catch (const dnnl::error& e) {
      if (bf16) {
        // A CPU below AVX-512 has no bf16 kernels at all: said once, not per shape.
        static std::atomic<bool> said{false};
        if (!said.exchange(true))
          spdlog::info("{}: oneDNN takes no bf16 convolution here ({}: {}); bf16 operands are "
                       "widened to f32 (exactly) and run on the f32 convolutions",
                       conv_direction_name(direction), describe(g, bf16), e.what());
      } else {
        spdlog::warn("{}: oneDNN refuses {} ({}); pfc's reference convolution runs it",
                     conv_direction_name(direction), describe(g, bf16), e.what());
      }
    }
  }
  return plans.emplace(key, std::move(plan)).first->second;
}

}  // namespace

bool onednn_built() { return true; }

// oneDNN 2.6's strided 1x1 kernels (they copy the strided input into a unit-stride buffer
// first) write past their buffers when a group's channels are not a multiple of its 16-float
// block: seen as heap corruption at 112x112 with 8 channels. iresnet's and MobileFaceNet's
// shortcuts have 64 and more; smaller ones run on the reference.
// Planes past oneDNN's 32-bit pixel counts (above) are not trusted either, so that the fused
// inference convolutions leave them to the reference as the plain ones do.
bool onednn_trusted_shape(const Conv2dGeometry& g) {
  return plane_fits_onednn(g) &&
         !(g.kernel == 1 && g.stride > 1 &&
           (g.in_per_group() % 16 != 0 || g.out_per_group() % 16 != 0));
}

std::optional<std::int64_t> onednn_conv2d_workspace_bytes(const Conv2dGeometry& g,
                                                         ConvDirection direction,
                                                         DType operands) {
  const std::optional<ConvPlan>& plan = cached_plan(g, direction, operands == DType::bf16);
  if (!plan) return std::nullopt;
  return plan->workspace_bytes();
}

void onednn_conv2d(const Conv2dGeometry& g, ConvDirection direction, DType operands,
                   const void* a, const void* b, float* out, void* workspace,
                   const void* prepared_filter) {
  const bool bf16 = operands == DType::bf16;
  const ConvPlan& plan = *cached_plan(g, direction, bf16);
  const ConvTypes types = conv_types(direction, bf16);
  const dnnl::engine& engine = onednn_engine();
  dnnl::stream& stream = onednn_stream();
  auto* base = static_cast<char*>(workspace);
  const memory filter_buffer(plan.filter, engine, base);
  const memory scratch = scratchpad(plan, base);
  auto wrap = [&](const memory::desc& d, const void* p) {
    return memory(d, engine, const_cast<void*>(p));
  };
  const memory x_or_dy = wrap(direction == ConvDirection::backward_data
                                  ? output_desc(g, types.output)
                                  : input_desc(g, types.input),
                              a);
  switch (direction) {
    case ConvDirection::forward:
    case ConvDirection::backward_data: {
      memory filter;
      if (prepared_filter != nullptr && plan.filter_reorder) {
        filter = memory(plan.filter, engine, const_cast<void*>(prepared_filter));
      } else {
        filter = wrap(plan.user_filter, b);
        if (plan.filter_reorder) {
          plan.filter_reorder->execute(stream, {{DNNL_ARG_FROM, filter},
                                                {DNNL_ARG_TO, filter_buffer},
                                                {DNNL_ARG_SCRATCHPAD, scratch}});
          filter = filter_buffer;
        }
      }
      const bool forward = direction == ConvDirection::forward;
      const memory result =
          wrap(forward ? output_desc(g, types.output) : input_desc(g, types.input), out);
      plan.conv.execute(stream, {{forward ? DNNL_ARG_SRC : DNNL_ARG_DIFF_DST, x_or_dy},
                                 {DNNL_ARG_WEIGHTS, filter},
                                 {forward ? DNNL_ARG_DST : DNNL_ARG_DIFF_SRC, result},
                                 {DNNL_ARG_SCRATCHPAD, scratch}});
      break;
    }
    case ConvDirection::backward_filter: {
      const memory dy = wrap(output_desc(g, types.output), b);
      const memory user_dw = wrap(plan.user_filter, out);
      const memory dw = plan.filter_reorder ? filter_buffer : user_dw;
      plan.conv.execute(stream, {{DNNL_ARG_SRC, x_or_dy},
                                 {DNNL_ARG_DIFF_DST, dy},
                                 {DNNL_ARG_DIFF_WEIGHTS, dw},
                                 {DNNL_ARG_SCRATCHPAD, scratch}});
      if (plan.filter_reorder)
        plan.filter_reorder->execute(
            stream, {{DNNL_ARG_FROM, dw}, {DNNL_ARG_TO, user_dw}, {DNNL_ARG_SCRATCHPAD, scratch}});
      break;
    }
  }
  stream.wait();
}

PreparedFilterLayout onednn_prepared_filter_layout(const Conv2dGeometry& g,
                                                   ConvDirection direction) {
  if (direction == ConvDirection::backward_filter) return {};
  // A plan lives as long as the process, at one address: it names the layout it wants.
  const std::optional<ConvPlan>& plan = cached_plan(g, direction, false);
  if (!plan || !plan->filter_reorder) return {};
  return {plan->filter_bytes, &*plan};
}

void onednn_prepare_filter(const Conv2dGeometry& g, ConvDirection direction, const float* w,
                           void* prepared, void* workspace) {
  const ConvPlan& plan = *cached_plan(g, direction, false);
  const dnnl::engine& engine = onednn_engine();
  dnnl::stream& stream = onednn_stream();
  const memory from(plan.user_filter, engine, const_cast<float*>(w));
  const memory to(plan.filter, engine, prepared);
  plan.filter_reorder->execute(stream, {{DNNL_ARG_FROM, from},
                                        {DNNL_ARG_TO, to},
                                        {DNNL_ARG_SCRATCHPAD,
                                         scratchpad(plan, static_cast<char*>(workspace))}});
  stream.wait();
}

}  // namespace pfc::cpu
