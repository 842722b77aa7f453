#include "io/checkpoint_room.h"

#include <fmt/format.h>

#include <system_error>
#include <vector>

#include "core/host_memory.h"
#include "io/checkpoint_layout.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

// "55.64 GiB", or "0.52 MiB" below a GiB (a small model's checkpoint).
std::string size_text(std::int64_t bytes) {
  const auto b = static_cast<double>(bytes);
  constexpr double kMiB = 1024.0 * 1024.0, kGiB = 1024.0 * kMiB;
  return b >= kGiB ? fmt::format("{:.2f} GiB", b / kGiB) : fmt::format("{:.2f} MiB", b / kMiB);
}

// The nearest folder of `path` that exists (the root itself once a checkpoint was written).
fs::path existing_folder(const fs::path& path) {
  fs::path folder = fs::absolute(path);
  std::error_code ec;
  while (!fs::is_directory(folder, ec) && folder.has_parent_path() &&
         folder.parent_path() != folder)
    folder = folder.parent_path();
  return folder;
}

std::string kept_text(const fs::path& root) {
  try {
    if (const auto latest = latest_checkpoint(root))
      return fmt::format("`latest` stays on {}", checkpoint_folder_name(latest->step));
  } catch (const Error&) {
    // A damaged `latest` names nothing to keep; the refusal stands on its own.
  }
  return "no earlier checkpoint is touched";
}

}  // namespace

CheckpointRoom measure_checkpoint_room(const fs::path& root) {
  CheckpointRoom room;
  const fs::path folder = existing_folder(root);
  room.disk_folder = folder.string();
  std::error_code ec;
  const fs::space_info space = fs::space(folder, ec);
  PFC_CHECK(!ec, "cannot read the free space of '{}' for a checkpoint: {}", folder.string(),
            ec.message());
  room.free_disk_bytes = static_cast<std::int64_t>(space.available);
  const HostMemory host = host_memory_available();
  room.free_host_bytes = host.available_bytes;
  room.host_source = host.source;
  return room;
}

void check_checkpoint_room(Comm& comm, const fs::path& root, std::int64_t step,
                           const CheckpointCost& cost, const CheckpointRoom& room) {
  std::vector<std::string> short_of;
  if (cost.disk_bytes > room.free_disk_bytes)
    short_of.push_back(fmt::format("{} of disk for its files, {} free in '{}'",
                                   size_text(cost.disk_bytes), size_text(room.free_disk_bytes),
                                   room.disk_folder));
  if (cost.host_bytes > room.free_host_bytes)
    short_of.push_back(fmt::format("{} of host memory to stage rank {}'s part, {} available ({})",
                                   size_text(cost.host_bytes), comm.rank(),
                                   size_text(room.free_host_bytes), room.host_source));
  const bool any = comm.all_reduce_scalar(short_of.empty() ? 0.0 : 1.0, ReduceOp::max) > 0.0;
  if (!any) return;
  const std::string where = (root / checkpoint_folder_name(step)).string();
  const std::string kept = kept_text(root);
  if (short_of.empty())
    throw CheckpointRefused(fmt::format("checkpoint {} is not written ({}): another rank has no "
                                        "room for it (see its message)",
                                        where, kept));
  std::string needs = short_of[0];
  if (short_of.size() > 1) needs += "; and " + short_of[1];
  throw CheckpointRefused(fmt::format("checkpoint {} is not written ({}): it needs {}",
                                      where, kept, needs));
}

}  // namespace pfc
