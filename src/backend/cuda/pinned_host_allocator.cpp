#include "backend/cuda/pinned_host_allocator.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "core/error.h"

namespace pfc {

void* PinnedHostAllocator::allocate(std::size_t bytes, MemoryPurpose purpose) {
  void* ptr = nullptr;
  if (bytes > 0) {
    // Portable: usable from any device context the process creates.
    const cudaError_t status = cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable);
    if (status != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      const MemorySnapshot snap = ledger().snapshot();
      throw OutOfMemoryError(
          fmt::format("pinned host memory: need {} bytes for {}, {} bytes pinned so far: {}", bytes,
                      memory_purpose_name(purpose), snap.total_in_use, cudaGetErrorString(status)),
          static_cast<long long>(bytes), 0);
    }
  }
  ledger().on_allocate(purpose, bytes);
  return ptr;
}

void PinnedHostAllocator::deallocate(void* ptr, std::size_t bytes, MemoryPurpose purpose) {
  if (ptr) static_cast<void>(cudaFreeHost(ptr));
  ledger().on_free(purpose, bytes);
}

}  // namespace pfc
