// oneDNN's forward-inference convolution with the inference epilogue (see
// onednn_fused_conv2d.h). The workspace holds, in order and each at 64-byte alignment: the
// filter reordered into the primitive's layout, an f32 x converted to bf16 (bf16 only), and
// the scratchpad shared by the primitive and its reorders.
#include "backend/cpu/onednn_fused_conv2d.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include "backend/cpu/onednn/onednn_engine.h"

namespace pfc::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

std::int64_t aligned(std::int64_t bytes) { return (bytes + 63) / 64 * 64; }

memory::desc activations(const Conv2dGeometry& g, bool input, dt type) {
  return input ? memory::desc({g.batch, g.in_channels, g.in_h, g.in_w}, type, tag::nhwc)
               : memory::desc({g.batch, g.out_channels, g.out_h(), g.out_w()}, type, tag::nhwc);
}

memory::desc filter_desc(const Conv2dGeometry& g, dt type, bool any) {
  if (g.groups == 1)
    return memory::desc({g.out_channels, g.in_channels, g.kernel, g.kernel}, type,
                        any ? tag::any : tag::ohwi);
  return memory::desc({g.groups, g.out_per_group(), g.in_per_group(), g.kernel, g.kernel}, type,
                      any ? tag::any : tag::gohwi);
}

dt input_type(const FusedConv& c) { return c.bf16_input ? dt::bf16 : dt::f32; }
dt output_type(const FusedConv& c) { return c.bf16_output ? dt::bf16 : dt::f32; }

// One channel's value per output channel: the bias, and the PReLU post-op's slopes.
memory::desc per_channel(const Conv2dGeometry& g) {
  return memory::desc({g.out_channels}, dt::f32, tag::a);
}
memory::desc prelu_slopes(const Conv2dGeometry& g) {
  return memory::desc({1, g.out_channels, 1, 1}, dt::f32, tag::abcd);
}

struct FusedPlan {
  dnnl::convolution_forward conv;
  memory::desc filter, user_filter;
  std::optional<dnnl::reorder> filter_reorder, input_reorder;
  std::int64_t filter_bytes = 0, input_bytes = 0, scratch_bytes = 0;
  std::int64_t input_offset() const { return aligned(filter_bytes); }
  std::int64_t scratch_offset() const { return input_offset() + aligned(input_bytes); }
  std::int64_t workspace_bytes() const { return scratch_offset() + scratch_bytes; }
};

std::string describe(const FusedConv& c) {
  const Conv2dGeometry& g = c.geometry;
  return fmt::format("{} x [{}, {}, {}, {}] ({} in, {} out), filter [{}, {}, {}, {}], "
                     "stride {}, pad {}, groups {}",
                     c.bf16 ? "bf16" : "f32", g.batch, g.in_h, g.in_w, g.in_channels,
                     c.bf16_input ? "bf16" : "f32", c.bf16_output ? "bf16" : "f32",
                     g.out_channels, g.kernel, g.kernel, g.in_per_group(), g.stride, g.pad,
                     g.groups);
}

std::int64_t scratch_of(const dnnl::reorder::primitive_desc& pd) {
  return static_cast<std::int64_t>(pd.scratchpad_desc().get_size());
}

std::optional<FusedPlan> make_plan(const FusedConv& c) {
  const Conv2dGeometry& g = c.geometry;
  if (!onednn_trusted_shape(g)) return std::nullopt;
  const dnnl::engine& engine = onednn_engine();
  const dt compute = c.bf16 ? dt::bf16 : dt::f32;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  if (c.prelu) ops.append_prelu(1 << 1);
  if (c.relu6) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 6.0f);
  if (c.accumulate) ops.append_sum(1.0f);
  attr.set_post_ops(ops);
  const memory::dims strides{g.stride, g.stride}, padding{g.pad, g.pad};
  const auto desc =
      c.bias ? dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                   activations(g, true, compute), filter_desc(g, compute, true), per_channel(g),
                   activations(g, false, output_type(c)), strides, padding, padding)
             : dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                   activations(g, true, compute), filter_desc(g, compute, true),
                   activations(g, false, output_type(c)), strides, padding, padding);
  const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
  const std::string impl = pd.impl_info_str();
  if (impl.rfind("ref", 0) == 0) {
    // oneDNN 2.6's bf16 kernels take no PReLU post-op: the backend then runs the convolution
    // without its activations and them as their own passes, so only a convolution without
    // activations that still has no kernel is worth a warning.
    if (c.prelu || c.relu6) return std::nullopt;
    spdlog::warn("conv2d_forward_fused: oneDNN offers only its reference kernel ({}) for {}; "
                 "pfc's reference passes run it",
                 impl, describe(c));
    return std::nullopt;
  }
  FusedPlan plan;
  plan.conv = dnnl::convolution_forward(pd);
  plan.filter = pd.weights_desc();
  plan.user_filter = filter_desc(g, compute, false);
  plan.scratch_bytes = static_cast<std::int64_t>(pd.scratchpad_desc().get_size());
  dnnl::primitive_attr reorder_attr;
  reorder_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (plan.filter != plan.user_filter) {
    const dnnl::reorder::primitive_desc reorder(engine, plan.user_filter, engine, plan.filter,
                                                reorder_attr);
    plan.filter_reorder = dnnl::reorder(reorder);
    plan.filter_bytes = static_cast<std::int64_t>(plan.filter.get_size());
    plan.scratch_bytes = std::max(plan.scratch_bytes, scratch_of(reorder));
  }
  if (c.bf16 && !c.bf16_input) {
    const memory::desc to = activations(g, true, dt::bf16);
    const dnnl::reorder::primitive_desc reorder(engine, activations(g, true, dt::f32), engine, to,
                                                reorder_attr);
    plan.input_reorder = dnnl::reorder(reorder);
    plan.input_bytes = static_cast<std::int64_t>(to.get_size());
    plan.scratch_bytes = std::max(plan.scratch_bytes, scratch_of(reorder));
  }
  return plan;
}

using PlanKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                           std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>;

PlanKey key_of(const FusedConv& c) {
  const Conv2dGeometry& g = c.geometry;
  return {g.batch, g.in_h, g.in_w, g.in_channels, g.out_channels, g.kernel, g.stride, g.pad,
          g.groups, c.variant()};
}

const std::optional<FusedPlan>& cached_plan(const FusedConv& c) {
  static std::mutex mutex;
  static std::map<PlanKey, std::optional<FusedPlan>> plans;
  const std::lock_guard<std::mutex> lock(mutex);
  const PlanKey key = key_of(c);
  auto found = plans.find(key);
  if (found != plans.end()) return found->second;
  std::optional<FusedPlan> plan;
  if (c.geometry.batch > 0) {
    try {
      plan = make_plan(c);
    } catch (const dnnl::error& e) {
      spdlog::warn("conv2d_forward_fused: oneDNN refuses {} ({}); pfc's reference passes run it",
                   describe(c), e.what());
    }
  }
  return plans.emplace(key, std::move(plan)).first->second;
}

memory::desc scratchpad_desc(const FusedPlan& plan) {
  return memory::desc({plan.scratch_bytes}, dt::u8, tag::a);
}

memory scratchpad(const FusedPlan& plan, char* workspace) {
  return memory(scratchpad_desc(plan), onednn_engine(), workspace + plan.scratch_offset());
}

// The memory objects and argument maps of a plan's convolution and input conversion, made once
// per plan and thread and pointed at each call's data: made afresh, they took a dozen
// allocations and descriptor set-ups per call, a third of all the allocations of a ViT image at
// batch 1. The filter alone is made per call: convolutions of one shape share a plan but not a
// filter, and pointing a blocked filter elsewhere would write zeros into its padding each time.
struct BoundArguments {
  memory x, converted, y, bias, slope, scratch;
  std::unordered_map<int, memory> conv, input_reorder;
};

BoundArguments& bound_arguments(const FusedPlan& plan, const FusedConv& c) {
  thread_local std::unordered_map<const FusedPlan*, BoundArguments> bound;
  auto found = bound.find(&plan);
  if (found != bound.end()) return found->second;
  const Conv2dGeometry& g = c.geometry;
  const dnnl::engine& engine = onednn_engine();
  BoundArguments a;
  a.x = memory(activations(g, true, input_type(c)), engine, DNNL_MEMORY_NONE);
  a.y = memory(activations(g, false, output_type(c)), engine, DNNL_MEMORY_NONE);
  a.scratch = memory(scratchpad_desc(plan), engine, DNNL_MEMORY_NONE);
  a.conv = {{DNNL_ARG_SRC, a.x}, {DNNL_ARG_DST, a.y}, {DNNL_ARG_SCRATCHPAD, a.scratch}};
  if (plan.input_reorder) {
    a.converted = memory(activations(g, true, dt::bf16), engine, DNNL_MEMORY_NONE);
    a.input_reorder = {
        {DNNL_ARG_FROM, a.x}, {DNNL_ARG_TO, a.converted}, {DNNL_ARG_SCRATCHPAD, a.scratch}};
    a.conv[DNNL_ARG_SRC] = a.converted;
  }
  if (c.bias) {
    a.bias = memory(per_channel(g), engine, DNNL_MEMORY_NONE);
    a.conv.emplace(DNNL_ARG_BIAS, a.bias);
  }
  if (c.prelu) {
    a.slope = memory(prelu_slopes(g), engine, DNNL_MEMORY_NONE);
    a.conv.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_WEIGHTS, a.slope);
  }
  a.conv.emplace(DNNL_ARG_WEIGHTS, memory());
  return bound.emplace(&plan, std::move(a)).first->second;
}

}  // namespace

bool onednn_bf16_native() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

std::optional<std::int64_t> onednn_fused_conv2d_workspace_bytes(const FusedConv& c) {
  const std::optional<FusedPlan>& plan = cached_plan(c);
  if (!plan) return std::nullopt;
  return plan->workspace_bytes();
}

void onednn_fused_conv2d(const FusedConv& c, const void* x, const void* w, const float* bias,
                         const float* slope, void* y, void* workspace,
                         const void* prepared_filter) {
  const FusedPlan& plan = *cached_plan(c);
  const dnnl::engine& engine = onednn_engine();
  dnnl::stream& stream = onednn_stream();
  auto* base = static_cast<char*>(workspace);
  BoundArguments& a = bound_arguments(plan, c);
  a.scratch.set_data_handle(base + plan.scratch_offset());
  memory filter;
  if (prepared_filter != nullptr && plan.filter_reorder) {
    filter = memory(plan.filter, engine, const_cast<void*>(prepared_filter));
  } else {
    filter = memory(plan.user_filter, engine, const_cast<void*>(w));
    if (plan.filter_reorder) {
      const memory reordered(plan.filter, engine, base);
      plan.filter_reorder->execute(stream, {{DNNL_ARG_FROM, filter},
                                            {DNNL_ARG_TO, reordered},
                                            {DNNL_ARG_SCRATCHPAD, a.scratch}});
      filter = reordered;
    }
  }
  a.x.set_data_handle(const_cast<void*>(x));
  if (plan.input_reorder) {
    a.converted.set_data_handle(base + plan.input_offset());
    plan.input_reorder->execute(stream, a.input_reorder);
  }
  a.y.set_data_handle(y);
  if (c.bias) a.bias.set_data_handle(const_cast<float*>(bias));
  if (c.prelu) a.slope.set_data_handle(const_cast<float*>(slope));
  a.conv[DNNL_ARG_WEIGHTS] = filter;
  plan.conv.execute(stream, a.conv);
  stream.wait();
}

PreparedFilterLayout onednn_fused_prepared_filter_layout(const FusedConv& c) {
  // A plan lives as long as the process, at one address: it names the layout it wants.
  const std::optional<FusedPlan>& plan = cached_plan(c);
  if (!plan || !plan->filter_reorder) return {};
  return {plan->filter_bytes, &*plan};
}

void onednn_fused_prepare_filter(const FusedConv& c, const void* w, void* prepared,
                                 void* workspace) {
  const FusedPlan& plan = *cached_plan(c);
  const dnnl::engine& engine = onednn_engine();
  dnnl::stream& stream = onednn_stream();
  const memory from(plan.user_filter, engine, const_cast<void*>(w));
  const memory to(plan.filter, engine, prepared);
  plan.filter_reorder->execute(
      stream, {{DNNL_ARG_FROM, from},
               {DNNL_ARG_TO, to},
               {DNNL_ARG_SCRATCHPAD, scratchpad(plan, static_cast<char*>(workspace))}});
  stream.wait();
}

}  // namespace pfc::cpu
