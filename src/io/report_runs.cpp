#include "io/report_runs.h"

#include <filesystem>

#include "core/error.h"
#include "io/checkpoint_layout.h"
#include "io/hdf5.h"
#include "io/report_files.h"

namespace pfc {

namespace fs = std::filesystem;

BenchRun read_bench_run(const std::string& path) {
  const h5::File file(path, h5::Mode::live_read);
  const hid_t id = file.id();
  const auto text = [&](const char* object, const char* name) {
    return h5::has_attribute(id, object, name) ? h5::read_attribute_string(id, object, name)
                                               : std::string();
  };
  const auto integer = [&](const char* object, const char* name) {
    return h5::has_attribute(id, object, name) ? h5::read_attribute_int(id, object, name) : 0;
  };
  const auto real = [&](const char* object, const char* name) {
    return h5::has_attribute(id, object, name) ? h5::read_attribute_double(id, object, name)
                                               : 0.0;
  };
  PFC_CHECK(h5::has_attribute(id, "/", "method") && h5::has_attribute(id, "/", "num_classes") &&
                h5::exists(id, "/summary") && h5::has_attribute(id, "/summary", "status"),
            "'{}' lacks the attributes method, num_classes or /summary status: not a metrics "
            "file written by pfc train",
            path);
  BenchRun run;
  run.path = path;
  run.method = text("/", "method");
  run.num_classes = integer("/", "num_classes");
  run.sample_rate = h5::has_attribute(id, "/", "sample_rate") ? real("/", "sample_rate") : 1.0;
  run.world_size = h5::has_attribute(id, "/", "world_size") ? integer("/", "world_size") : 1;
  run.emulated = integer("/", "emulated") != 0;
  run.device = text("/", "device");
  run.network = text("/", "network");
  run.gpu_names = text("/", "gpu_names");
  run.start_time = text("/", "start_time");
  run.status = text("/summary", "status");
  run.message = text("/summary", "message");
  run.steps = integer("/summary", "steps");
  run.timed_rows =
      h5::has_attribute(id, "/summary", "timed_rows") ? integer("/summary", "timed_rows") : -1;
  run.batch_size = integer("/", "batch_size");
  run.samples_per_s = real("/summary", "samples_per_s");
  run.comm_time_s = real("/summary", "comm_time_s");
  run.mem_peak_bytes = integer("/summary", "mem_peak_bytes");
  run.device_overhead_bytes = integer("/summary", "device_overhead_bytes");
  run.mem_needed_bytes = integer("/summary", "mem_needed_bytes");
  run.mem_available_bytes = integer("/summary", "mem_available_bytes");
  run.planned = run.device == "meta";
  if (run.planned && h5::exists(id, "/plan")) {
    run.plan_gpu = text("/plan", "gpu_name");
    run.samples_per_s_bound = real("/plan", "samples_per_s_bound");
  }
  return run;
}

bool measured(const BenchRun& run) {
  // A plan's figures are planned, whatever rows it logged.
  if (run.planned) return true;
  if (run.timed_rows >= 0) return run.timed_rows > 0;
  return run.samples_per_s > 0;  // written before timed_rows: 0 meant "no rows"
}

double samples_per_s_with_comm(const BenchRun& run) {
  const double global_batch = static_cast<double>(run.batch_size * run.world_size);
  if (!run.emulated || run.samples_per_s <= 0 || global_batch <= 0) return run.samples_per_s;
  return global_batch / (global_batch / run.samples_per_s + run.comm_time_s);
}

FoundRuns find_bench_runs(const std::vector<std::string>& paths) {
  FoundRuns found;
  const std::vector<std::string> files = report_files(
      paths, [](const fs::path& file) { return file.filename() == kMetricsFile; },
      found.unreadable);
  for (const std::string& file : files) {
    // A run killed while writing can leave a file HDF5 cannot open; the others still count.
    try {
      found.runs.push_back(read_bench_run(file));
    } catch (const Error& e) {
      found.unreadable.push_back(file + ": " + e.what());
    }
  }
  return found;
}

}  // namespace pfc
