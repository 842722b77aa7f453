// bf16 GEMMs on oneDNN's matmul primitive (see onednn_bf16_gemm.h). A transposed operand is
// the same memory described with swapped strides, so every transpose is one primitive.
#include "backend/cpu/onednn_bf16_gemm.h"

#include <spdlog/spdlog.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include "backend/cpu/onednn/onednn_engine.h"

namespace pfc::cpu {
namespace {

using dnnl::memory;
using dt = memory::data_type;

// [rows, cols] of `type`, row-major with leading dimension ld, or its transpose (the matrix
// stored [cols, rows]); for a batch, [outer, inner, rows, cols] with the matrices' strides.
memory::desc matrix_desc(const Bf16GemmShape& s, std::int64_t rows, std::int64_t cols,
                         std::int64_t ld, bool transposed, std::int64_t outer_stride,
                         std::int64_t inner_stride, dt type) {
  const memory::dims inside = transposed ? memory::dims{1, ld} : memory::dims{ld, 1};
  if (!s.batched()) return memory::desc({rows, cols}, type, inside);
  return memory::desc({s.outer, s.inner, rows, cols}, type,
                      {outer_stride, inner_stride, inside[0], inside[1]});
}

memory::desc a_desc(const Bf16GemmShape& s) {
  return matrix_desc(s, s.m, s.k, s.lda, s.transpose_a, s.a_outer_stride, s.a_inner_stride,
                     dt::bf16);
}
memory::desc b_desc(const Bf16GemmShape& s) {
  return matrix_desc(s, s.k, s.n, s.ldb, s.transpose_b, s.b_outer_stride, s.b_inner_stride,
                     dt::bf16);
}
memory::desc c_desc(const Bf16GemmShape& s) {
  return matrix_desc(s, s.m, s.n, s.ldc, false, s.c_outer_stride, s.c_inner_stride, dt::f32);
}

struct GemmPlan {
  dnnl::matmul matmul;
  std::int64_t scratch_bytes = 0;
};

std::optional<GemmPlan> make_plan(const Bf16GemmShape& s) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (s.alpha != 1.0f) attr.set_output_scales(0, {s.alpha});
  const dnnl::matmul::desc desc(a_desc(s), b_desc(s), c_desc(s));
  const dnnl::matmul::primitive_desc pd(desc, attr, onednn_engine());
  const std::string impl = pd.impl_info_str();
  // oneDNN's "ref" kernels are plain loops, slower than f32 BLAS on widened operands.
  if (impl.rfind("ref", 0) == 0) {
    spdlog::debug("bf16 gemm [{}, {}] x [{}, {}]: oneDNN offers only {}; computed in f32",
                  s.m, s.k, s.k, s.n, impl);
    return std::nullopt;
  }
  return GemmPlan{dnnl::matmul(pd), static_cast<std::int64_t>(pd.scratchpad_desc().get_size())};
}

using PlanKey =
    std::tuple<bool, bool, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
               std::int64_t, float, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
               std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

const std::optional<GemmPlan>& cached_plan(const Bf16GemmShape& s) {
  static std::mutex mutex;
  static std::map<PlanKey, std::optional<GemmPlan>> plans;
  const std::lock_guard<std::mutex> lock(mutex);
  const PlanKey key{s.transpose_a,    s.transpose_b,    s.m,
                    s.n,              s.k,              s.lda,
                    s.ldb,            s.ldc,            s.alpha,
                    s.outer,          s.inner,          s.a_outer_stride,
                    s.a_inner_stride, s.b_outer_stride, s.b_inner_stride,
                    s.c_outer_stride, s.c_inner_stride};
  auto found = plans.find(key);
  if (found != plans.end()) return found->second;
  std::optional<GemmPlan> plan;
  if (s.m > 0 && s.n > 0 && s.k > 0) {
    try {
      plan = make_plan(s);
    } catch (const dnnl::error& e) {
      spdlog::debug("bf16 gemm [{}, {}] x [{}, {}]: oneDNN refuses it ({}); computed in f32",
                    s.m, s.k, s.k, s.n, e.what());
    }
  }
  return plans.emplace(key, std::move(plan)).first->second;
}

// The product's memory objects and argument map, made once per plan and thread and pointed at
// each call's operands: made afresh, their descriptors' dimensions, the objects and the map
// took a dozen allocations per product, attention's two per block.
struct BoundArguments {
  memory a, b, c, scratch;
  std::unordered_map<int, memory> arguments;
};

BoundArguments& bound_arguments(const GemmPlan& plan, const Bf16GemmShape& s) {
  thread_local std::unordered_map<const GemmPlan*, BoundArguments> bound;
  auto found = bound.find(&plan);
  if (found != bound.end()) return found->second;
  const dnnl::engine& engine = onednn_engine();
  BoundArguments m;
  m.a = memory(a_desc(s), engine, DNNL_MEMORY_NONE);
  m.b = memory(b_desc(s), engine, DNNL_MEMORY_NONE);
  m.c = memory(c_desc(s), engine, DNNL_MEMORY_NONE);
  m.scratch = memory(memory::desc({plan.scratch_bytes}, dt::u8, memory::format_tag::a), engine,
                     DNNL_MEMORY_NONE);
  m.arguments = {{DNNL_ARG_SRC, m.a},
                 {DNNL_ARG_WEIGHTS, m.b},
                 {DNNL_ARG_DST, m.c},
                 {DNNL_ARG_SCRATCHPAD, m.scratch}};
  return bound.emplace(&plan, std::move(m)).first->second;
}

}  // namespace

std::optional<std::int64_t> onednn_bf16_gemm_workspace_bytes(const Bf16GemmShape& s) {
  const std::optional<GemmPlan>& plan = cached_plan(s);
  if (!plan) return std::nullopt;
  return plan->scratch_bytes;
}

void onednn_bf16_gemm(const Bf16GemmShape& s, const void* a, const void* b, float* c,
                      void* workspace) {
  const GemmPlan& plan = *cached_plan(s);
  BoundArguments& bound = bound_arguments(plan, s);
  bound.a.set_data_handle(const_cast<void*>(a));
  bound.b.set_data_handle(const_cast<void*>(b));
  bound.c.set_data_handle(c);
  bound.scratch.set_data_handle(workspace);
  dnnl::stream& stream = onednn_stream();
  plan.matmul.execute(stream, bound.arguments);
  stream.wait();
}

}  // namespace pfc::cpu
