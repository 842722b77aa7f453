#include "train/run_description.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace pfc {

namespace {

constexpr std::int64_t kNameBytes = 64;

// Every rank's `name`, comma-separated in rank order (names longer than 63 bytes are cut).
std::string gather_names(Comm& comm, const std::string& name) {
  Tensor mine = Tensor::host({1, kNameBytes}, DType::u8);
  std::memset(mine.raw(), 0, kNameBytes);
  std::memcpy(mine.raw(), name.data(), std::min<std::size_t>(name.size(), kNameBytes - 1));
  const Tensor all = comm.all_gather_host(mine);
  std::string joined;
  for (int r = 0; r < comm.world_size(); ++r) {
    if (r) joined += ",";
    joined += reinterpret_cast<const char*>(all.data<std::uint8_t>() + r * kNameBytes);
  }
  return joined;
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

RunInfo describe_run(const Config& cfg, Comm& comm, Backend& backend, const std::string& command_line) {
  RunInfo info;
  info.command_line = command_line;
  info.world_size = comm.world_size();
  info.emulated = cfg.emulate_world_size > 0;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  info.hosts = gather_names(comm, host);
  info.gpu_names = gather_names(comm, backend.name());
  info.slurm_job_id = environment("SLURM_JOB_ID");
  info.slurm_job_name = environment("SLURM_JOB_NAME");
  info.slurm_job_nodelist = environment("SLURM_JOB_NODELIST");
  info.slurm_job_partition = environment("SLURM_JOB_PARTITION");
  info.slurm_restart_count = environment("SLURM_RESTART_COUNT");
  return info;
}

}  // namespace pfc
