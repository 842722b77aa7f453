// How much host memory this process may still take: the kernel's MemAvailable, or less where
// a cgroup (a Slurm job, a container) limits the process: its limit less its usage (cgroup v2
// memory.max / memory.current, or v1 memory.limit_in_bytes / memory.usage_in_bytes).
#pragma once

#include <cstdint>
#include <string>

namespace pfc {

struct HostMemory {
  std::int64_t available_bytes = 0;
  std::string source;  // "MemAvailable" or the cgroup file that limited it
};

HostMemory host_memory_available();

}  // namespace pfc
