// Large host blocks kept for reuse after they are freed. A training or embedding step
// allocates the same activation sizes every step, and a block of tens of megabytes that goes
// back to the kernel (glibc maps every block over 32 MiB afresh) comes back as new pages, one
// page fault and one zeroed page per 4 KiB on first touch: a sixth of a CPU training step.
// Blocks of at least kSmallestCachedBlock are kept and handed out again for the same size or
// for one up to a third smaller (the smallest such block first): a network's activations come
// in a few sizes near each other, and a cache that matched sizes exactly evicted one size to
// make room for the next, so a ViT's inference faulted in 1.2 GB of fresh pages per batch.
// Smaller blocks go to malloc, which reuses them itself.
//
// The cache holds little more than it must: its blocks plus the live ones (each at its own
// size) stay at or under a quarter more than the most that was ever live at once, so the
// process's resident memory is at most that much above its peak without the cache (half again
// as much where larger blocks were lent). Blocks are evicted when a fresh one would pass that,
// or when the host has no memory for a fresh one. The quarter is slack for the order in which
// a step asks for its sizes: its backward frees and asks for other sizes than its forward, and
// with the cache held to the peak itself, r50's training faulted in 0.5 GB of fresh pages per
// step (7 % of an fp32 step and 10 % of a bf16 one on 2 cores); with the slack, a quarter of
// that.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>

namespace pfc {

inline constexpr std::size_t kSmallestCachedBlock = std::size_t{1} << 20;
// Cached and live blocks together stay within the peak of live ones plus peak / this.
inline constexpr std::size_t kPeakSlackDivisor = 4;

class HostBlockCache {
 public:
  HostBlockCache() = default;
  HostBlockCache(const HostBlockCache&) = delete;
  HostBlockCache& operator=(const HostBlockCache&) = delete;
  ~HostBlockCache();

  // A block of `bytes` (a multiple of 64, more than 0) aligned to 64 bytes, or nullptr when
  // the host has no memory for it even after the cache is emptied.
  void* take(std::size_t bytes);
  // Returns a block from take(`bytes`).
  void give(void* ptr, std::size_t bytes);

  std::size_t cached_bytes() const;

 private:
  void evict_until_within_peak();  // to the peak and its slack, with mutex_ held
  void evict_all();                // with mutex_ held

  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> free_;  // by size
  std::map<void*, std::size_t> larger_;     // blocks lent for a smaller size: their own size
  std::size_t cached_ = 0, live_ = 0, peak_ = 0;
};

// The process's cache, shared by every host allocator: the pages belong to the process.
HostBlockCache& host_block_cache();

}  // namespace pfc
