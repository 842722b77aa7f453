#include "backend/cuda/device_arena.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "backend/cuda/cuda_check.h"
#include "core/error.h"

namespace pfc {

namespace {

double gib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

// A corrupt free cannot be reported by an exception: it comes from a destructor.
[[noreturn]] void abort_bad_free(const char* what, const void* ptr, std::size_t bytes) {
  std::fprintf(stderr, "pfc: device arena: %s (pointer %p, %zu bytes)\n", what, ptr, bytes);
  std::abort();
}

}  // namespace

std::size_t parse_byte_count(const std::string& text, const char* what) {
  std::size_t pos = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &pos);
  } catch (const std::exception&) {
    throw UsageError(
        fmt::format("{} = \"{}\" is not a byte count (e.g. 85899345920 or 80G)", what, text));
  }
  const std::string suffix = text.substr(pos);
  unsigned long long unit = 1;
  if (suffix == "K" || suffix == "k")
    unit = 1ull << 10;
  else if (suffix == "M" || suffix == "m")
    unit = 1ull << 20;
  else if (suffix == "G" || suffix == "g")
    unit = 1ull << 30;
  else if (!suffix.empty())
    throw UsageError(
        fmt::format("{} = \"{}\": unknown suffix \"{}\" (allowed: K, M, G)", what, text, suffix));
  return static_cast<std::size_t>(value * unit);
}

std::size_t DeviceArena::default_reservation_bytes() {
  if (const char* env = std::getenv("PFC_CUDA_ARENA_BYTES"); env && *env)
    return parse_byte_count(env, "PFC_CUDA_ARENA_BYTES");
  std::size_t free_bytes = 0, total_bytes = 0;
  PFC_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<std::size_t>(static_cast<double>(free_bytes) * kCudaArenaFreeFraction);
}

DeviceArena::DeviceArena(std::size_t bytes) : capacity_(bytes / kAlignment * kAlignment) {
  PFC_CHECK(capacity_ > 0, "device arena: reservation of {} bytes is too small", bytes);
  void* base = nullptr;
  const cudaError_t status = cudaMalloc(&base, capacity_);
  if (status != cudaSuccess) {
    static_cast<void>(cudaGetLastError());  // clear the sticky error for later calls
    std::size_t free_bytes = 0, total_bytes = 0;
    static_cast<void>(cudaMemGetInfo(&free_bytes, &total_bytes));
    throw OutOfMemoryError(
        fmt::format("device memory: cannot reserve the arena of {} bytes ({:.2f} GiB): {}; "
                    "{} of {} bytes free on the device (set PFC_CUDA_ARENA_BYTES lower)",
                    capacity_, gib(capacity_), cudaGetErrorString(status), free_bytes, total_bytes),
        static_cast<long long>(capacity_), static_cast<long long>(free_bytes));
  }
  base_ = static_cast<char*>(base);
  insert_free(0, capacity_);
}

DeviceArena::~DeviceArena() {
  if (base_) static_cast<void>(cudaFree(base_));
}

void DeviceArena::insert_free(std::size_t offset, std::size_t size) {
  free_by_offset_.emplace(offset, size);
  free_by_size_.emplace(size, offset);
}

void DeviceArena::erase_free(std::size_t offset, std::size_t size) {
  free_by_offset_.erase(offset);
  free_by_size_.erase({size, offset});
}

void* DeviceArena::allocate(std::size_t bytes, MemoryPurpose purpose) {
  if (bytes == 0) {
    ledger().on_allocate(purpose, 0);
    return nullptr;
  }
  const std::size_t size = aligned_size(bytes);
  std::lock_guard lock(mutex_);
  // Best fit: the smallest free block that holds the request, the lowest address among equals.
  const auto it = free_by_size_.lower_bound({size, 0});
  if (it == free_by_size_.end()) throw_out_of_memory(size, purpose);
  const auto [block_size, offset] = *it;
  erase_free(offset, block_size);
  if (block_size > size) insert_free(offset + size, block_size - size);
  used_.emplace(offset, size);
  in_use_ += size;
  ledger().on_allocate(purpose, size);
  return base_ + offset;
}

void DeviceArena::deallocate(void* ptr, std::size_t bytes, MemoryPurpose purpose) {
  if (ptr == nullptr) {
    if (bytes != 0) abort_bad_free("null pointer freed with a non-zero size", ptr, bytes);
    ledger().on_free(purpose, 0);
    return;
  }
  std::lock_guard lock(mutex_);
  const char* p = static_cast<const char*>(ptr);
  if (p < base_ || p >= base_ + capacity_)
    abort_bad_free("pointer not from this arena", ptr, bytes);
  std::size_t offset = static_cast<std::size_t>(p - base_);
  const auto used = used_.find(offset);
  if (used == used_.end()) abort_bad_free("double free or interior pointer", ptr, bytes);
  std::size_t size = used->second;
  if (size != aligned_size(bytes)) abort_bad_free("size differs from the allocation", ptr, bytes);
  used_.erase(used);
  in_use_ -= size;
  ledger().on_free(purpose, size);

  // Coalesce with the free neighbours on both sides.
  auto next = free_by_offset_.lower_bound(offset);
  if (next != free_by_offset_.end() && next->first == offset + size) {
    const std::size_t next_size = next->second;
    erase_free(next->first, next_size);
    size += next_size;
  }
  auto after = free_by_offset_.lower_bound(offset);
  if (after != free_by_offset_.begin()) {
    const auto prev = std::prev(after);
    if (prev->first + prev->second == offset) {
      const std::size_t prev_offset = prev->first;
      const std::size_t prev_size = prev->second;
      erase_free(prev_offset, prev_size);
      offset = prev_offset;
      size += prev_size;
    }
  }
  insert_free(offset, size);
}

std::size_t DeviceArena::bytes_in_use() const {
  std::lock_guard lock(mutex_);
  return in_use_;
}

std::size_t DeviceArena::largest_free_block() const {
  std::lock_guard lock(mutex_);
  return free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
}

void DeviceArena::throw_out_of_memory(std::size_t needed, MemoryPurpose purpose) {
  const MemorySnapshot snap = ledger().snapshot();
  std::string breakdown;
  for (std::size_t p = 0; p < kMemoryPurposeCount; ++p) {
    if (!breakdown.empty()) breakdown += ", ";
    breakdown +=
        fmt::format("{} {}", memory_purpose_name(static_cast<MemoryPurpose>(p)), snap.in_use[p]);
  }
  const std::size_t largest = free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
  const std::size_t available = capacity_ - in_use_;
  throw OutOfMemoryError(
      fmt::format("device memory: need {} bytes for {}, {} of {} bytes in use ({}); {} bytes "
                  "free, largest free block {} (need {:.2f} GiB, in use {:.2f} of {:.2f} GiB)",
                  needed, memory_purpose_name(purpose), in_use_, capacity_, breakdown, available,
                  largest, gib(needed), gib(in_use_), gib(capacity_)),
      static_cast<long long>(needed), static_cast<long long>(available));
}

}  // namespace pfc
