#include "backend/cpu/cpu_runtime.h"

#include <omp.h>

namespace pfc::cpu {

int cpu_threads() { return omp_get_max_threads(); }

}  // namespace pfc::cpu
