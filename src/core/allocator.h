// Where tensor bytes come from. The CPU backend allocates aligned host memory; the CUDA
// backend carves a device arena; the meta backend hands out addresses with no memory behind
// them (backend/meta). All of them report every byte to a MemoryLedger.
#pragma once

#include <cstddef>

#include "core/memory_ledger.h"

namespace pfc {

// meta: tensors with a shape and no storage, which a plan allocates (backend/meta).
enum class DeviceKind { cpu, cuda, meta };

// "host", "device", "meta": where a tensor of that kind lives, for messages.
const char* device_kind_place(DeviceKind kind);

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DeviceKind device() const = 0;
  // Throws pfc::Error naming the purpose and sizes when the bytes cannot be had.
  virtual void* allocate(std::size_t bytes, MemoryPurpose purpose) = 0;
  virtual void deallocate(void* ptr, std::size_t bytes, MemoryPurpose purpose) = 0;
  MemoryLedger& ledger() { return ledger_; }

 private:
  MemoryLedger ledger_;
};

// Host memory aligned to 64 bytes (a cache line, and enough for AVX-512 loads).
class HostAllocator final : public Allocator {
 public:
  DeviceKind device() const override { return DeviceKind::cpu; }
  void* allocate(std::size_t bytes, MemoryPurpose purpose) override;
  void deallocate(void* ptr, std::size_t bytes, MemoryPurpose purpose) override;
};

// The process-wide host allocator, used for host tensors that belong to no backend
// (golden data, checkpoint staging).
HostAllocator& host_allocator();

}  // namespace pfc
