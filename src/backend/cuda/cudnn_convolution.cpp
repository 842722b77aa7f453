#include "backend/cuda/cudnn_convolution.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/tensor.h"

namespace pfc::cuda {

namespace {

// Algorithms may use at most this much scratch (and at most a quarter of the largest free
// block), so that a plan found early does not exhaust the arena later in the step.
constexpr std::size_t kMaxWorkspaceBytes = std::size_t{512} << 20;

std::string describe(const Conv2dGeometry& g, DType dtype) {
  return fmt::format("conv {}x{} stride {} pad {} {} [{}, {}, {}, {}] -> {} channels", g.kernel,
                     g.kernel, g.stride, g.pad, dtype_name(dtype), g.batch, g.in_h, g.in_w,
                     g.in_channels, g.out_channels);
}

int narrow(std::int64_t v, const Conv2dGeometry& g, DType dtype) {
  PFC_CHECK(v >= 0 && v <= std::numeric_limits<int>::max(), "{}: dimension {} exceeds cuDNN's int",
            describe(g, dtype), v);
  return static_cast<int>(v);
}

cudnnDataType_t cudnn_type(DType dtype) {
  return dtype == DType::f16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

// f32 must not use tensor cores: TF32 would break fp32 parity with the CPU and PyTorch, and
// on Ampere and later CUDNN_DEFAULT_MATH permits TF32, so only FMA math qualifies.
bool math_allowed(DType dtype, cudnnMathType_t math) {
  return dtype == DType::f16 || math == CUDNN_FMA_MATH;
}

// f32 is the parity mode (golden values within 1e-4, the CPU backend within f32 rounding):
// the FFT and Winograd algorithms transform the operands and round in the transformed domain,
// which costs digits, and non-deterministic ones (atomic accumulation) make two identical runs
// differ. f16 runs take the fastest of any kind.
bool transforms_operands(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT || a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool transforms_operands(cudnnConvolutionBwdDataAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool transforms_operands(cudnnConvolutionBwdFilterAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

// The first (fastest) usable result of a cudnnFind* / cudnnGet*_v7 list. Should an f32 shape
// have no deterministic, non-transforming algorithm, the fastest FMA one is taken with a
// warning: a run whose parity with the CPU holds to that algorithm's rounding beats no run.
template <class Perf>
const Perf* pick(const Perf* results, int count, DType dtype, std::size_t workspace_limit,
                 const std::string& plan_name) {
  auto usable = [&](const Perf& r) {
    return r.status == CUDNN_STATUS_SUCCESS && r.memory <= workspace_limit &&
           math_allowed(dtype, r.mathType);
  };
  for (int i = 0; i < count; ++i) {
    const Perf& r = results[i];
    const bool exact_enough = dtype == DType::f16 || (!transforms_operands(r.algo) &&
                                                      r.determinism == CUDNN_DETERMINISTIC);
    if (usable(r) && exact_enough) return &r;
  }
  for (int i = 0; i < count; ++i) {
    if (!usable(results[i])) continue;
    spdlog::warn("{}: no deterministic non-FFT/Winograd cuDNN algorithm; using algorithm {} "
                 "(f32 parity for this convolution is only to its rounding)",
                 plan_name, static_cast<int>(results[i].algo));
    return &results[i];
  }
  return nullptr;
}

}  // namespace

// One direction's choice: algorithm, the math type it was measured with, workspace bytes.
template <class Algo>
struct Choice {
  bool ready = false;
  Algo algo{};
  std::size_t workspace = 0;
};

struct CudnnConvolution::Plan {
  DType dtype = DType::f32;
  std::string name;
  TensorDescriptor x = make_tensor_descriptor();
  TensorDescriptor y = make_tensor_descriptor();
  FilterDescriptor w = make_filter_descriptor();
  // One convolution descriptor per direction: each carries the math type its algorithm uses.
  ConvolutionDescriptor conv_fwd = make_convolution_descriptor();
  ConvolutionDescriptor conv_bwd_data = make_convolution_descriptor();
  ConvolutionDescriptor conv_bwd_filter = make_convolution_descriptor();
  Choice<cudnnConvolutionFwdAlgo_t> fwd;
  Choice<cudnnConvolutionBwdDataAlgo_t> bwd_data;
  Choice<cudnnConvolutionBwdFilterAlgo_t> bwd_filter;
};

CudnnConvolution::CudnnConvolution(cudnnHandle_t handle, DeviceArena& arena)
    : handle_(handle), arena_(arena) {}

CudnnConvolution::~CudnnConvolution() = default;

std::size_t CudnnConvolution::find_workspace_limit() const {
  return std::min(kMaxWorkspaceBytes, arena_.largest_free_block() / 4);
}

CudnnConvolution::Plan& CudnnConvolution::plan(const Conv2dGeometry& g, DType dtype) {
  const Key key{g.batch,  g.in_h,   g.in_w, g.in_channels,          g.out_channels,
                g.kernel, g.stride, g.pad,  static_cast<int>(dtype)};
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;

  auto p = std::make_unique<Plan>();
  p->dtype = dtype;
  p->name = describe(g, dtype);
  const cudnnDataType_t type = cudnn_type(dtype);
  PFC_CHECK_CUDNN(cudnnSetTensor4dDescriptor(
      p->x, CUDNN_TENSOR_NHWC, type, narrow(g.batch, g, dtype), narrow(g.in_channels, g, dtype),
      narrow(g.in_h, g, dtype), narrow(g.in_w, g, dtype)));
  PFC_CHECK_CUDNN(cudnnSetTensor4dDescriptor(
      p->y, CUDNN_TENSOR_NHWC, type, narrow(g.batch, g, dtype), narrow(g.out_channels, g, dtype),
      narrow(g.out_h(), g, dtype), narrow(g.out_w(), g, dtype)));
  PFC_CHECK_CUDNN(cudnnSetFilter4dDescriptor(
      p->w, type, CUDNN_TENSOR_NHWC, narrow(g.out_channels, g, dtype),
      narrow(g.in_channels, g, dtype), narrow(g.kernel, g, dtype), narrow(g.kernel, g, dtype)));
  const int pad = narrow(g.pad, g, dtype), stride = narrow(g.stride, g, dtype);
  const cudnnMathType_t math = dtype == DType::f16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  for (cudnnConvolutionDescriptor_t conv :
       {p->conv_fwd.get(), p->conv_bwd_data.get(), p->conv_bwd_filter.get()}) {
    // Accumulate in f32 for both dtypes (f16 data with f32 compute is cuDNN's PSEUDO_HALF).
    PFC_CHECK_CUDNN(cudnnSetConvolution2dDescriptor(conv, pad, pad, stride, stride, 1, 1,
                                                    CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    PFC_CHECK_CUDNN(cudnnSetConvolutionMathType(conv, math));
  }
  Plan& ref = *p;
  plans_.emplace(key, std::move(p));
  return ref;
}

namespace {

// Sets the math type the chosen f16 algorithm was measured with (f32 stays FMA).
void adopt_math(cudnnConvolutionDescriptor_t conv, DType dtype, cudnnMathType_t math) {
  if (dtype == DType::f16) PFC_CHECK_CUDNN(cudnnSetConvolutionMathType(conv, math));
}

Tensor workspace_tensor(DeviceArena& arena, std::size_t bytes) {
  return Tensor::empty({static_cast<std::int64_t>(bytes)}, DType::u8, arena,
                       MemoryPurpose::workspace);
}

}  // namespace

void CudnnConvolution::forward(const Conv2dGeometry& g, DType dtype, const void* x, const void* w,
                               void* y) {
  Plan& p = plan(g, dtype);
  if (!p.fwd.ready) {
    const std::size_t limit = find_workspace_limit();
    std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> results{};
    int count = 0;
    const cudnnConvolutionFwdAlgoPerf_t* best = nullptr;
    {
      Tensor scratch = workspace_tensor(arena_, limit);
      PFC_CHECK_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(
          handle_, p.x, x, p.w, w, p.conv_fwd, p.y, y, static_cast<int>(results.size()), &count,
          results.data(), scratch.raw(), limit));
      best = pick(results.data(), count, dtype, limit, p.name);
    }
    if (!best) {
      PFC_CHECK_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(handle_, p.x, p.w, p.conv_fwd, p.y,
                                                             static_cast<int>(results.size()),
                                                             &count, results.data()));
      best = pick(results.data(), count, dtype, limit, p.name);
    }
    PFC_CHECK(best != nullptr, "{}: cuDNN offers no forward algorithm within {} bytes of workspace",
              p.name, limit);
    adopt_math(p.conv_fwd, dtype, best->mathType);
    p.fwd = {true, best->algo, best->memory};
  }
  Tensor ws = workspace_tensor(arena_, p.fwd.workspace);
  const float one = 1.0f, zero = 0.0f;
  PFC_CHECK_CUDNN(cudnnConvolutionForward(handle_, &one, p.x, x, p.w, w, p.conv_fwd, p.fwd.algo,
                                          ws.raw(), p.fwd.workspace, &zero, p.y, y));
}

void CudnnConvolution::backward_data(const Conv2dGeometry& g, DType dtype, const void* dy,
                                     const void* w, void* dx) {
  Plan& p = plan(g, dtype);
  if (!p.bwd_data.ready) {
    const std::size_t limit = find_workspace_limit();
    std::array<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT> results{};
    int count = 0;
    const cudnnConvolutionBwdDataAlgoPerf_t* best = nullptr;
    {
      Tensor scratch = workspace_tensor(arena_, limit);
      PFC_CHECK_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(
          handle_, p.w, w, p.y, dy, p.conv_bwd_data, p.x, dx, static_cast<int>(results.size()),
          &count, results.data(), scratch.raw(), limit));
      best = pick(results.data(), count, dtype, limit, p.name);
    }
    if (!best) {
      PFC_CHECK_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(
          handle_, p.w, p.y, p.conv_bwd_data, p.x, static_cast<int>(results.size()), &count,
          results.data()));
      best = pick(results.data(), count, dtype, limit, p.name);
    }
    PFC_CHECK(best != nullptr,
              "{}: cuDNN offers no backward-data algorithm within {} bytes of workspace", p.name,
              limit);
    adopt_math(p.conv_bwd_data, dtype, best->mathType);
    p.bwd_data = {true, best->algo, best->memory};
  }
  Tensor ws = workspace_tensor(arena_, p.bwd_data.workspace);
  const float one = 1.0f, zero = 0.0f;
  PFC_CHECK_CUDNN(cudnnConvolutionBackwardData(handle_, &one, p.w, w, p.y, dy, p.conv_bwd_data,
                                               p.bwd_data.algo, ws.raw(), p.bwd_data.workspace,
                                               &zero, p.x, dx));
}

void CudnnConvolution::backward_filter(const Conv2dGeometry& g, DType dtype, const void* x,
                                       const void* dy, void* dw) {
  Plan& p = plan(g, dtype);
  if (!p.bwd_filter.ready) {
    const std::size_t limit = find_workspace_limit();
    std::array<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT>
        results{};
    int count = 0;
    const cudnnConvolutionBwdFilterAlgoPerf_t* best = nullptr;
    {
      Tensor scratch = workspace_tensor(arena_, limit);
      PFC_CHECK_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(
          handle_, p.x, x, p.y, dy, p.conv_bwd_filter, p.w, dw, static_cast<int>(results.size()),
          &count, results.data(), scratch.raw(), limit));
      best = pick(results.data(), count, dtype, limit, p.name);
    }
    if (!best) {
      PFC_CHECK_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
          handle_, p.x, p.y, p.conv_bwd_filter, p.w, static_cast<int>(results.size()), &count,
          results.data()));
      best = pick(results.data(), count, dtype, limit, p.name);
    }
    PFC_CHECK(best != nullptr,
              "{}: cuDNN offers no backward-filter algorithm within {} bytes of workspace", p.name,
              limit);
    adopt_math(p.conv_bwd_filter, dtype, best->mathType);
    p.bwd_filter = {true, best->algo, best->memory};
  }
  Tensor ws = workspace_tensor(arena_, p.bwd_filter.workspace);
  const float one = 1.0f, zero = 0.0f;
  PFC_CHECK_CUDNN(cudnnConvolutionBackwardFilter(handle_, &one, p.x, x, p.y, dy, p.conv_bwd_filter,
                                                 p.bwd_filter.algo, ws.raw(),
                                                 p.bwd_filter.workspace, &zero, p.w, dw));
}

}  // namespace pfc::cuda
