// How the CUDA backend sizes the libraries' workspaces, in one place so that a memory planner
// can model them without a GPU (plain C++: no CUDA headers, nothing to link). All of them are
// arena buffers of purpose `workspace`.
//
// cuBLAS: one buffer of kCublasWorkspaceBytes, given to the handle when the backend is made.
//
// cuDNN convolutions (applied by CudnnConvolution):
//  - One workspace serves every convolution plan, held from the first convolution to the
//    backend's end.
//  - It changes size only when a plan is made (the first call of a new geometry, dtype and
//    direction). Then it is resized to conv_workspace_limit(held, largest free block) for
//    cudnnFind*Ex to try the algorithms in, and the fastest usable algorithm whose workspace
//    is at most that is chosen; afterwards it is resized to the largest workspace any plan
//    chose so far. Calls with a cached plan allocate nothing.
//  - When the arena cannot give the larger buffer, the trial (and the choice) keeps to the
//    workspace already held, down to algorithms that need none: a short arena costs speed,
//    never the run.
//  - When no algorithm qualifies within the limit (cuDNN's measured and suggested lists
//    alike), the trial is made once more with a workspace of kConvWorkspaceCapBytes, if the
//    arena can give it, before the plan fails naming every algorithm refused and why.
// A planner without cuDNN knows neither the algorithms nor their workspaces; it can bound the
// convolution workspace by conv_workspace_limit(0, free): the trial while the first plan is
// found, and never more than kConvWorkspaceCapBytes afterwards.
#pragma once

#include <algorithm>
#include <cstddef>

namespace pfc::cuda {

// cuBLAS's recommended workspace on Hopper (smaller suffices before it).
constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

// No convolution algorithm may use more: cuDNN's fastest choices seldom need more than a few
// hundred MiB at r50's shapes, and at the largest class counts every GiB is classifier.
constexpr std::size_t kConvWorkspaceCapBytes = std::size_t{512} << 20;

// The workspace bytes a convolution algorithm chosen now may use: the workspace already held,
// grown by at most a quarter of the arena's largest free block (the rest stays for the tensors
// later layers allocate), and never past the cap.
constexpr std::size_t conv_workspace_limit(std::size_t held, std::size_t largest_free_block) {
  return std::max(held, std::min(kConvWorkspaceCapBytes, held + largest_free_block / 4));
}

}  // namespace pfc::cuda
