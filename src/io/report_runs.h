// Finding the metrics.h5 files that benchmark runs wrote and reading what `pfc report` needs
// from each: which cell of the table it fills (identities, method, sample rate), how the
// run ended, its speed and memory (layout: io/metrics_writer.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pfc {

struct BenchRun {
  std::string path;
  std::string method;  // dp | mp | pfc
  std::int64_t num_classes = 0;
  double sample_rate = 1.0;
  std::int64_t world_size = 1;
  bool emulated = false;
  std::string device;
  std::string gpu_names;  // one entry per rank, comma-separated
  std::string start_time;
  std::string status;     // running | ok | out_of_memory | failed
  std::string message;
  std::int64_t steps = 0;
  double samples_per_s = 0;
  std::int64_t mem_peak_bytes = 0;
  std::int64_t mem_needed_bytes = 0;
  std::int64_t mem_available_bytes = 0;
};

// Reads one metrics.h5; throws pfc::Error naming the file when it lacks the attributes.
BenchRun read_bench_run(const std::string& path);

struct FoundRuns {
  std::vector<BenchRun> runs;                // sorted by path
  std::vector<std::string> unreadable;       // "path: why", for files that could not be read
};

// Every file named metrics.h5 under each of `paths` (recursively; a path may also name a file
// directly). A path that does not exist is a UsageError.
FoundRuns find_bench_runs(const std::vector<std::string>& paths);

}  // namespace pfc
