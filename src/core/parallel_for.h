// The CPU's per-element work on the OpenMP threads of the process (OMP_NUM_THREADS threads,
// set up at start-up by app/thread_layout.h). [0, n) is cut into one contiguous range per
// thread, so a loop whose iterations are independent computes the same bits on any number of
// threads; a reduction stays inside one iteration (a row, a channel) and so keeps its order.
// The body must not throw: operands and indices are checked before the loop.
#pragma once

#include <cstdint>
#include <functional>

namespace pfc {

using RangeBody = std::function<void(std::int64_t begin, std::int64_t end)>;

// Calls body(begin, end) on disjoint ranges covering [0, n): one per thread, or one in all
// when n is below `grain` per thread (too little work to wake the threads for), or when
// called from inside such a loop.
void parallel_for(std::int64_t n, std::int64_t grain, const RangeBody& body);

// Elements per thread below which an elementwise loop stays on one thread.
inline constexpr std::int64_t kElementGrain = 16384;

}  // namespace pfc
