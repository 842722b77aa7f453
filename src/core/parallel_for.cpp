#include "core/parallel_for.h"

#include <omp.h>

namespace pfc {

void parallel_for(std::int64_t n, std::int64_t grain, const RangeBody& body) {
  const std::int64_t threads = omp_get_max_threads();
  if (threads <= 1 || n < 2 * grain || omp_in_parallel()) {
    if (n > 0) body(0, n);
    return;
  }
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num(), count = omp_get_num_threads();
    const std::int64_t begin = n * t / count, end = n * (t + 1) / count;
    if (begin < end) body(begin, end);
  }
}

}  // namespace pfc
