#include "backend/meta/meta_allocator.h"

#include <limits>

#include "core/error.h"

namespace pfc {

void* MetaAllocator::allocate(std::size_t bytes, MemoryPurpose purpose) {
  const std::size_t counted = policy_.ledger_bytes(bytes);
  // A plan may ask for what no machine has; the ledger's int64 sums must still hold it.
  const auto in_use = ledger().snapshot().total_in_use;
  PFC_CHECK(counted <= static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max() - in_use),
            "meta allocation of {} bytes for {} beside {} in use exceeds 2^63 bytes", bytes,
            memory_purpose_name(purpose), in_use);
  ledger().on_allocate(purpose, counted);
  if (bytes == 0) return nullptr;
  const std::uint64_t span = (counted + kCudaArenaAlignment - 1) / kCudaArenaAlignment *
                             kCudaArenaAlignment;
  return reinterpret_cast<void*>(next_address_.fetch_add(span));
}

void MetaAllocator::deallocate(void*, std::size_t bytes, MemoryPurpose purpose) {
  ledger().on_free(purpose, policy_.ledger_bytes(bytes));
}

}  // namespace pfc
