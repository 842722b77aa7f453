#include "core/host_block_cache.h"

#include <cstdlib>

namespace pfc {

HostBlockCache::~HostBlockCache() {
  const std::lock_guard<std::mutex> lock(mutex_);
  evict_all();
}

void* HostBlockCache::take(std::size_t bytes) {
  if (bytes < kSmallestCachedBlock) return std::aligned_alloc(64, bytes);
  const std::lock_guard<std::mutex> lock(mutex_);
  auto found = free_.lower_bound(bytes);
  if (found != free_.end() && found->first <= bytes + bytes / 2) {
    const auto [size, ptr] = *found;
    free_.erase(found);
    cached_ -= size;
    live_ += size;
    if (size != bytes) larger_.emplace(ptr, size);
    if (live_ > peak_) peak_ = live_;
    return ptr;
  }
  live_ += bytes;
  if (live_ > peak_) peak_ = live_;
  evict_until_within_peak();
  void* ptr = std::aligned_alloc(64, bytes);
  if (ptr == nullptr && !free_.empty()) {
    evict_all();
    ptr = std::aligned_alloc(64, bytes);
  }
  if (ptr == nullptr) live_ -= bytes;
  return ptr;
}

void HostBlockCache::give(void* ptr, std::size_t bytes) {
  if (bytes < kSmallestCachedBlock) {
    std::free(ptr);
    return;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (auto lent = larger_.find(ptr); lent != larger_.end()) {
    bytes = lent->second;
    larger_.erase(lent);
  }
  live_ -= bytes;
  free_.emplace(bytes, ptr);
  cached_ += bytes;
}

std::size_t HostBlockCache::cached_bytes() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return cached_;
}

// The largest blocks go first: one eviction makes the most room, and small blocks are the
// likelier to be asked for again.
void HostBlockCache::evict_until_within_peak() {
  while (!free_.empty() && cached_ + live_ > peak_ + peak_ / kPeakSlackDivisor) {
    auto largest = std::prev(free_.end());
    std::free(largest->second);
    cached_ -= largest->first;
    free_.erase(largest);
  }
}

void HostBlockCache::evict_all() {
  for (const auto& [bytes, ptr] : free_) std::free(ptr);
  free_.clear();
  cached_ = 0;
}

HostBlockCache& host_block_cache() {
  // Never destroyed: host tensors of static objects may be freed after it would be.
  static auto* cache = new HostBlockCache;
  return *cache;
}

}  // namespace pfc
