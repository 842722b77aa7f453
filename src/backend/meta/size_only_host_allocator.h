// A plan's host buffers: the batches, index uploads and initial values that a run fills on the
// host before its device takes them. Each allocation is counted in the host allocator's ledger
// byte for byte as the run's host allocation is (so a CPU plan's host_buffers term is the
// run's), but nothing backs it: the tensors are on the meta device, with a shape and no values,
// so that a plan's own memory and time do not grow with the classes, the image size or the
// embedding. Addresses are non-canonical on x86-64, as the meta allocator's are.
#pragma once

#include <atomic>
#include <cstdint>

#include "backend/backend.h"
#include "core/allocator.h"

namespace pfc {

class SizeOnlyHostAllocator final : public Allocator {
 public:
  DeviceKind device() const override { return DeviceKind::meta; }
  void* allocate(std::size_t bytes, MemoryPurpose purpose) override;
  void deallocate(void* ptr, std::size_t bytes, MemoryPurpose purpose) override;

 private:
  // Apart from the meta allocator's range (from 2^62), which a plan never fills.
  std::atomic<std::uint64_t> next_address_{std::uint64_t{3} << 61};
};

// The process-wide one: the meta backend's staging allocator.
SizeOnlyHostAllocator& size_only_host_allocator();

// Where host code puts values it computes for `backend`: the host allocator, or on the meta
// device the size-only one (the caller then computes nothing).
Allocator& host_allocator_for(Backend& backend);

}  // namespace pfc
