#include "backend/meta/size_only_host_allocator.h"

namespace pfc {

void* SizeOnlyHostAllocator::allocate(std::size_t bytes, MemoryPurpose purpose) {
  host_allocator().ledger().on_allocate(purpose, bytes);
  if (bytes == 0) return nullptr;
  // The host allocator's 64-byte rounding keeps two live tensors' addresses apart.
  return reinterpret_cast<void*>(next_address_.fetch_add((bytes + 63) / 64 * 64));
}

void SizeOnlyHostAllocator::deallocate(void*, std::size_t bytes, MemoryPurpose purpose) {
  host_allocator().ledger().on_free(purpose, bytes);
}

SizeOnlyHostAllocator& size_only_host_allocator() {
  static SizeOnlyHostAllocator allocator;
  return allocator;
}

Allocator& host_allocator_for(Backend& backend) {
  if (backend.device() == DeviceKind::meta) return size_only_host_allocator();
  return host_allocator();
}

}  // namespace pfc
