// The device memory of a CUDA backend: one cudaMalloc reservation carved by a best-fit free
// list with coalescing, 256-byte aligned. Every byte handed out is counted by purpose in the
// Allocator's MemoryLedger (the aligned size, so the ledger's total equals what the arena
// holds), and a request that does not fit throws pfc::OutOfMemoryError with the breakdown.
//
// The arena is stream-ordered, not thread-safe with respect to device work: a block freed
// while kernels on the backend's stream still use it may be handed out again at once,
// which is safe because every later user of it is queued behind those kernels on the same
// stream (NcclComm orders its own stream with events for the same reason).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "backend/allocation_policy.h"
#include "core/allocator.h"

namespace pfc {

class DeviceArena final : public Allocator {
 public:
  static constexpr std::size_t kAlignment = kCudaArenaAlignment;

  // Reserves `bytes` on the current device (rounded down to the alignment).
  explicit DeviceArena(std::size_t bytes);
  ~DeviceArena() override;
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  DeviceKind device() const override { return DeviceKind::cuda; }
  void* allocate(std::size_t bytes, MemoryPurpose purpose) override;
  void deallocate(void* ptr, std::size_t bytes, MemoryPurpose purpose) override;

  std::size_t capacity() const { return capacity_; }
  std::size_t bytes_in_use() const;
  std::size_t largest_free_block() const;

  // The reservation a backend makes: env PFC_CUDA_ARENA_BYTES (a byte count, optionally
  // with a K, M or G suffix for powers of 1024), else kCudaArenaFreeFraction (92%) of the
  // device's free memory.
  static std::size_t default_reservation_bytes();

  static std::size_t aligned_size(std::size_t bytes) {
    return (bytes + kAlignment - 1) / kAlignment * kAlignment;
  }

 private:
  void insert_free(std::size_t offset, std::size_t size);
  void erase_free(std::size_t offset, std::size_t size);
  [[noreturn]] void throw_out_of_memory(std::size_t needed, MemoryPurpose purpose);

  mutable std::mutex mutex_;
  char* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t in_use_ = 0;
  std::map<std::size_t, std::size_t> free_by_offset_;           // offset -> size
  std::set<std::pair<std::size_t, std::size_t>> free_by_size_;  // (size, offset): best fit
  std::unordered_map<std::size_t, std::size_t> used_;           // offset -> aligned size
};

// Parses a byte count such as "1073741824", "512M" or "80G" (K, M, G: powers of 1024).
// Throws pfc::UsageError naming `what` when the text is not one.
std::size_t parse_byte_count(const std::string& text, const char* what);

}  // namespace pfc
