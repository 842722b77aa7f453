// cuDNN convolutions (cudnn_convolution.h): plans cached per shape, the algorithm choice, and
// the one workspace every plan shares (workspace_policy.h).
#include "backend/cuda/cudnn_convolution.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/conv_algorithm_choice.h"
#include "backend/cuda/workspace_policy.h"
#include "core/error.h"

namespace pfc::cuda {

namespace {

std::string describe(const Conv2dGeometry& g, DType dtype) {
  return fmt::format("conv {}x{} stride {} pad {} groups {} {} [{}, {}, {}, {}] -> {} channels",
                     g.kernel, g.kernel, g.stride, g.pad, g.groups, dtype_name(dtype), g.batch,
                     g.in_h, g.in_w, g.in_channels, g.out_channels);
}

int narrow(std::int64_t v, const Conv2dGeometry& g, DType dtype) {
  PFC_CHECK(v >= 0 && v <= std::numeric_limits<int>::max(), "{}: dimension {} exceeds cuDNN's int",
            describe(g, dtype), v);
  return static_cast<int>(v);
}

cudnnDataType_t cudnn_type(DType dtype) {
  return dtype == DType::f16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

// f32 is the parity mode: FFT and Winograd algorithms are told apart from the rest (see
// conv_algorithm_choice.h).
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

template <class Perf>
std::vector<AlgoResult> algo_results(const Perf* results, int count) {
  std::vector<AlgoResult> out;
  for (int i = 0; i < count; ++i) {
    const Perf& r = results[i];
    out.push_back({static_cast<int>(r.algo), r.status, r.memory, r.mathType, r.determinism,
                   transforms_operands(r.algo)});
  }
  return out;
}

}  // namespace

// One direction's choice: the algorithm and the workspace bytes it needs.
template <class Algo>
struct CudnnConvolution::Choice {
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

namespace {

Tensor workspace_tensor(DeviceArena& arena, std::size_t bytes) {
  return Tensor::empty({static_cast<std::int64_t>(bytes)}, DType::u8, arena,
                       MemoryPurpose::workspace);
}

// Sets the math type the chosen f16 algorithm was measured with (f32 stays FMA).
void adopt_math(cudnnConvolutionDescriptor_t conv, DType dtype, cudnnMathType_t math) {
  if (dtype == DType::f16) PFC_CHECK_CUDNN(cudnnSetConvolutionMathType(conv, math));
}

}  // namespace

CudnnConvolution::CudnnConvolution(cudnnHandle_t handle, DeviceArena& arena)
    : handle_(handle), arena_(arena), workspace_(workspace_tensor(arena, 0)) {}

CudnnConvolution::~CudnnConvolution() = default;

CudnnConvolution::Plan& CudnnConvolution::plan(const Conv2dGeometry& g, DType dtype) {
  const Key key{g.batch,  g.in_h,   g.in_w, g.in_channels, g.out_channels,
                g.kernel, g.stride, g.pad,  g.groups,      static_cast<int>(dtype)};
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
      narrow(g.in_per_group(), g, dtype), narrow(g.kernel, g, dtype), narrow(g.kernel, g, dtype)));
  const int pad = narrow(g.pad, g, dtype), stride = narrow(g.stride, g, dtype);
  const cudnnMathType_t math = dtype == DType::f16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  for (cudnnConvolutionDescriptor_t conv :
       {p->conv_fwd.get(), p->conv_bwd_data.get(), p->conv_bwd_filter.get()}) {
    // Accumulate in f32 for both dtypes (f16 data with f32 compute is cuDNN's PSEUDO_HALF).
    PFC_CHECK_CUDNN(cudnnSetConvolution2dDescriptor(conv, pad, pad, stride, stride, 1, 1,
                                                    CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    // The filter descriptor holds in / groups input channels; cuDNN splits both sides.
    PFC_CHECK_CUDNN(cudnnSetConvolutionGroupCount(conv, narrow(g.groups, g, dtype)));
    PFC_CHECK_CUDNN(cudnnSetConvolutionMathType(conv, math));
  }
  Plan& ref = *p;
  plans_.emplace(key, std::move(p));
  return ref;
}

bool CudnnConvolution::resize_workspace(std::size_t bytes) {
  const std::size_t held = workspace_.bytes();
  if (bytes == held) return true;
  // Back to the arena first, so that the new buffer may take its place. Kernels still queued
  // with the old one are safe: the arena is stream-ordered (device_arena.h).
  workspace_ = Tensor();
  try {
    workspace_ = workspace_tensor(arena_, bytes);
    return true;
  } catch (const OutOfMemoryError&) {
    workspace_ = workspace_tensor(arena_, held);  // the block just freed holds it again
    return false;
  }
}

template <class Perf, int kCapacity, class Find, class Heuristics>
CudnnConvolution::Choice<decltype(Perf::algo)> CudnnConvolution::choose(
    const Plan& p, cudnnConvolutionDescriptor_t conv, const char* direction, Find&& find,
    Heuristics&& heuristics) {
  const std::size_t held = workspace_.bytes();
  const std::size_t wanted = conv_workspace_limit(held, arena_.largest_free_block());
  std::size_t limit = resize_workspace(wanted) ? wanted : held;
  // cudnnFind*Ex times its trials on the host: queued work must not count against them.
  cudaStream_t stream = nullptr;
  PFC_CHECK_CUDNN(cudnnGetStream(handle_, &stream));
  PFC_CHECK_CUDA(cudaStreamSynchronize(stream));

  std::array<Perf, kCapacity> perf{};
  int count = 0;
  auto measured = [&] {
    PFC_CHECK_CUDNN(find(workspace_.raw(), limit, perf.data(), kCapacity, &count));
    return algo_results(perf.data(), count);
  };
  // The measured list, else cuDNN's suggestions, else (a short arena or a limit grown from a
  // small workspace) one more measurement with a workspace of the cap; each list is kept for
  // the account of what was refused.
  std::vector<std::pair<const char*, std::vector<AlgoResult>>> tried;
  std::optional<AlgoPick> pick;
  auto consider = [&](const char* source, std::vector<AlgoResult> results) {
    pick = pick_algorithm(results, p.dtype, limit);
    tried.emplace_back(source, std::move(results));
    return pick.has_value();
  };
  if (!consider("measured", measured())) {
    PFC_CHECK_CUDNN(heuristics(perf.data(), kCapacity, &count));
    if (!consider("suggested", algo_results(perf.data(), count)) &&
        limit < kConvWorkspaceCapBytes && resize_workspace(kConvWorkspaceCapBytes)) {
      limit = kConvWorkspaceCapBytes;
      consider("measured again with the capped workspace", measured());
    }
  }
  if (!pick) {
    std::string account;
    for (const auto& [source, results] : tried)
      account += fmt::format("\n  {}: {}", source, describe_refusals(results, p.dtype, limit));
    resize_workspace(largest_chosen_);
    throw Error(fmt::format("{}: cuDNN offers no usable {} algorithm within {} bytes of "
                            "workspace; refused:{}",
                            p.name, direction, limit, account));
  }
  const Perf& best = perf[pick->index];
  const AlgoResult& chosen = tried.back().second[pick->index];
  if (pick->inexact_fallback)
    spdlog::warn("{}: no deterministic non-FFT/Winograd cuDNN algorithm; using algorithm {} "
                 "(f32 parity for this convolution is only to its rounding)",
                 p.name, chosen.algo);
  adopt_math(conv, p.dtype, best.mathType);
  const Choice<decltype(Perf::algo)> choice{true, best.algo, best.memory};
  // Back to what the plans need; never fails, as that is at most the size held now.
  largest_chosen_ = std::max(largest_chosen_, choice.workspace);
  resize_workspace(largest_chosen_);
  return choice;
}

void CudnnConvolution::forward(const Conv2dGeometry& g, DType dtype, const void* x, const void* w,
                               void* y) {
  Plan& p = plan(g, dtype);
  if (!p.fwd.ready) {
    p.fwd = choose<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT>(
        p, p.conv_fwd, "forward",
        [&](void* ws, std::size_t bytes, cudnnConvolutionFwdAlgoPerf_t* r, int n, int* count) {
          return cudnnFindConvolutionForwardAlgorithmEx(handle_, p.x, x, p.w, w, p.conv_fwd, p.y,
                                                        y, n, count, r, ws, bytes);
        },
        [&](cudnnConvolutionFwdAlgoPerf_t* r, int n, int* count) {
          return cudnnGetConvolutionForwardAlgorithm_v7(handle_, p.x, p.w, p.conv_fwd, p.y, n,
                                                        count, r);
        });
  }
  const float one = 1.0f, zero = 0.0f;
  PFC_CHECK_CUDNN(cudnnConvolutionForward(handle_, &one, p.x, x, p.w, w, p.conv_fwd, p.fwd.algo,
                                          workspace_.raw(), p.fwd.workspace, &zero, p.y, y));
}

void CudnnConvolution::backward_data(const Conv2dGeometry& g, DType dtype, const void* dy,
                                     const void* w, void* dx) {
  Plan& p = plan(g, dtype);
  if (!p.bwd_data.ready) {
    p.bwd_data = choose<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT>(
        p, p.conv_bwd_data, "backward-data",
        [&](void* ws, std::size_t bytes, cudnnConvolutionBwdDataAlgoPerf_t* r, int n,
            int* count) {
          return cudnnFindConvolutionBackwardDataAlgorithmEx(
              handle_, p.w, w, p.y, dy, p.conv_bwd_data, p.x, dx, n, count, r, ws, bytes);
        },
        [&](cudnnConvolutionBwdDataAlgoPerf_t* r, int n, int* count) {
          return cudnnGetConvolutionBackwardDataAlgorithm_v7(handle_, p.w, p.y, p.conv_bwd_data,
                                                             p.x, n, count, r);
        });
  }
  const float one = 1.0f, zero = 0.0f;
  PFC_CHECK_CUDNN(cudnnConvolutionBackwardData(handle_, &one, p.w, w, p.y, dy, p.conv_bwd_data,
                                               p.bwd_data.algo, workspace_.raw(),
                                               p.bwd_data.workspace, &zero, p.x, dx));
}

void CudnnConvolution::backward_filter(const Conv2dGeometry& g, DType dtype, const void* x,
                                       const void* dy, void* dw) {
  Plan& p = plan(g, dtype);
  if (!p.bwd_filter.ready) {
    p.bwd_filter =
        choose<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT>(
            p, p.conv_bwd_filter, "backward-filter",
            [&](void* ws, std::size_t bytes, cudnnConvolutionBwdFilterAlgoPerf_t* r, int n,
                int* count) {
              return cudnnFindConvolutionBackwardFilterAlgorithmEx(
                  handle_, p.x, x, p.y, dy, p.conv_bwd_filter, p.w, dw, n, count, r, ws, bytes);
            },
            [&](cudnnConvolutionBwdFilterAlgoPerf_t* r, int n, int* count) {
              return cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                  handle_, p.x, p.y, p.conv_bwd_filter, p.w, n, count, r);
            });
  }
  const float one = 1.0f, zero = 0.0f;
  PFC_CHECK_CUDNN(cudnnConvolutionBackwardFilter(handle_, &one, p.x, x, p.y, dy,
                                                 p.conv_bwd_filter, p.bwd_filter.algo,
                                                 workspace_.raw(), p.bwd_filter.workspace, &zero,
                                                 p.w, dw));
}

}  // namespace pfc::cuda
