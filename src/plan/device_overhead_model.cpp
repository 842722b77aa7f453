#include "plan/device_overhead_model.h"

#include "backend/cuda/workspace_policy.h"

namespace pfc {

namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// The partial sums of our reduction kernels (backend/cuda/channel_reduce.h): at most 1024 row
// blocks x 2 partials x 512 channels x 4 bytes.
constexpr std::int64_t kKernelScratchBytes = 4 * kMiB;
// The CUDA context with cuBLAS's and cuDNN's handles and the kernels they load (lazily, as
// CUDA 12 and later do): an estimate, until the device script's device_overhead_bytes of a
// world-size-1 run replaces it.
constexpr std::int64_t kCudaContextBytes = 768 * kMiB;
// NCCL's buffers for a ring: per channel and per peer (two in a ring) a buffer of each
// protocol: Simple NCCL_BUFFSIZE = 4 MiB (NCCL's documented default), LL128 about 4.5 MiB,
// LL 256 KiB; 16 channels, typical for eight NVLink GPUs. An estimate, for world size > 1.
constexpr int kNcclChannels = 16;
constexpr std::int64_t kNcclBytesPerChannelPeer = 4 * kMiB + 4608 * 1024 + 256 * 1024;

}  // namespace

std::vector<ModelledTerm> modelled_overhead(BackendKind plan_for, const OverheadFacts& facts) {
  if (plan_for == BackendKind::cpu)
    return {{"host_buffers", facts.host_buffer_bytes, true,
             "measured: the plan's host allocations (batches, staging, host copies)"},
            {"kernel_scratch", facts.host_scratch_bytes, true,
             "the largest scratch a CPU kernel takes (im2col, f64 copies, widened f16 operands)"}};
  std::vector<ModelledTerm> terms = {
      {"cublas_workspace", static_cast<std::int64_t>(cuda::kCublasWorkspaceBytes), true,
       "cuda::kCublasWorkspaceBytes (backend/cuda/workspace_policy.h), held from the start"},
      // The one convolution workspace the backend holds grows to the largest any chosen
      // algorithm needs, never past the cap; which algorithms cuDNN picks only a GPU knows.
      {"cudnn_workspace", static_cast<std::int64_t>(cuda::kConvWorkspaceCapBytes), true,
       "bound: cuda::kConvWorkspaceCapBytes (backend/cuda/workspace_policy.h)"},
      {"kernel_scratch", kKernelScratchBytes, true,
       "bound of our reduction kernels' partial sums (backend/cuda/channel_reduce.h)"},
      {"cuda_context", kCudaContextBytes, false,
       "estimate: context, cuBLAS and cuDNN handles and kernels"}};
  if (facts.world_size > 1)
    terms.push_back({"nccl_buffers", kNcclChannels * 2 * kNcclBytesPerChannelPeer, false,
                     "estimate: 16 channels x 2 peers x (Simple 4 MiB + LL128 4.5 MiB + LL "
                     "256 KiB)"});
  return terms;
}

}  // namespace pfc
