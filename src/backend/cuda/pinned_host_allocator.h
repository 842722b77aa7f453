// Page-locked host memory (cudaHostAlloc) for buffers that cross to the GPU every step, such
// as the data pipeline's batches: copies from it are truly asynchronous and run at full bus
// speed. Tensors from it are host tensors (device() == cpu) that any host code may read,
// once the backend's stream has been synchronised after a copy into them.
#pragma once

#include "core/allocator.h"

namespace pfc {

class PinnedHostAllocator final : public Allocator {
 public:
  DeviceKind device() const override { return DeviceKind::cpu; }
  void* allocate(std::size_t bytes, MemoryPurpose purpose) override;
  void deallocate(void* ptr, std::size_t bytes, MemoryPurpose purpose) override;
};

}  // namespace pfc
