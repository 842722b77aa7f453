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
  // A limit (ulimit -v, a cgroup) or a size the user asked for: an error naming the need,
  // which commands turn into a message about the option that asked for it.
  if (rounded != 0 && ptr == nullptr)
    throw OutOfMemoryError(fmt::format("out of host memory: {:.2f} GiB for {} could not be "
                                       "allocated ({} bytes)",
                                       static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0),
                                       memory_purpose_name(purpose), bytes),
                           static_cast<long long>(bytes), 0);
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
