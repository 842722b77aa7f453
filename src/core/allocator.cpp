#include "core/allocator.h"

#include "core/error.h"
#include "core/host_block_cache.h"

namespace pfc {

const char* device_kind_place(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::cpu: return "host";
    case DeviceKind::cuda: return "device";
    case DeviceKind::meta: return "meta";
  }
  return "?";
}

void* HostAllocator::allocate(std::size_t bytes, MemoryPurpose purpose) {
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  void* ptr = rounded == 0 ? nullptr : host_block_cache().take(rounded);
  PFC_CHECK(rounded == 0 || ptr != nullptr, "out of host memory allocating {} bytes for {}",
            bytes, memory_purpose_name(purpose));
  ledger().on_allocate(purpose, bytes);
  return ptr;
}

void HostAllocator::deallocate(void* ptr, std::size_t bytes, MemoryPurpose purpose) {
  if (ptr != nullptr) host_block_cache().give(ptr, (bytes + 63) / 64 * 64);
  ledger().on_free(purpose, bytes);
}

HostAllocator& host_allocator() {
  static HostAllocator allocator;
  return allocator;
}

}  // namespace pfc
