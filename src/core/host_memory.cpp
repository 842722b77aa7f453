#include "core/host_memory.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <optional>

namespace pfc {

namespace {

// The first number in a file ("max" and missing files give nothing).
std::optional<std::int64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::int64_t value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

std::optional<std::int64_t> mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

}  // namespace

HostMemory host_memory_available() {
  HostMemory m{std::numeric_limits<std::int64_t>::max(), "no limit found"};
  if (const auto available = mem_available()) m = {*available, "MemAvailable"};
  const std::pair<const char*, const char*> cgroups[] = {
      {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
      {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
  for (const auto& [limit_file, usage_file] : cgroups) {
    const auto limit = read_number(limit_file);
    const auto usage = read_number(usage_file);
    if (!limit || !usage) continue;
    const std::int64_t left = std::max<std::int64_t>(0, *limit - *usage);
    if (left < m.available_bytes) m = {left, limit_file};
  }
  return m;
}

}  // namespace pfc
