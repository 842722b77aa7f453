// The memory of the meta backend: none. Each allocation is counted in the ledger exactly as
// the allocator of the backend being planned counts it (AllocationPolicy::ledger_bytes: the
// CPU's requested bytes, the CUDA arena's 256-byte blocks), so the ledger's figures are the
// planned run's, and gets an address of its own that is never backed by memory: comms compare
// operand addresses (an all-gather in place, buffers that overlap), so two live tensors must not
// share one, but nothing may read through it (Tensor::data refuses meta tensors; the addresses
// are non-canonical on x86-64, so a stray raw read faults at once instead of reading garbage).
#pragma once

#include <atomic>
#include <cstdint>

#include "backend/allocation_policy.h"
#include "core/allocator.h"

namespace pfc {

class MetaAllocator final : public Allocator {
 public:
  explicit MetaAllocator(const AllocationPolicy& policy) : policy_(policy) {}

  DeviceKind device() const override { return DeviceKind::meta; }
  void* allocate(std::size_t bytes, MemoryPurpose purpose) override;
  void deallocate(void* ptr, std::size_t bytes, MemoryPurpose purpose) override;

 private:
  const AllocationPolicy& policy_;
  // Addresses only ever grow (2^62 of them outlast any plan); 0-byte tensors get none.
  std::atomic<std::uint64_t> next_address_{std::uint64_t{1} << 62};
};

}  // namespace pfc
