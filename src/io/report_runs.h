// Finding the metrics.h5 files that benchmark runs (and plans: pfc plan) wrote and reading what
// `pfc report` needs from each: which cell of the table it fills (identities, method, sample
// rate), how the run ended, its speed and memory (layout: io/metrics_writer.h,
// plan/plan_metrics.h).
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
  std::string network;
  std::string gpu_names;  // one entry per rank, comma-separated
  std::string start_time;
  std::string status;     // running | ok | out_of_memory | failed
  std::string message;
  std::int64_t steps = 0;
  std::int64_t timed_rows = 0;  // rows after the warm-up; -1: not recorded (an older file)
  std::int64_t batch_size = 0;  // per rank
  double samples_per_s = 0;
  double comm_time_s = 0;       // per step, modelled (emulated runs; 0 otherwise)
  std::int64_t mem_peak_bytes = 0;
  std::int64_t device_overhead_bytes = 0;  // CUDA context, libraries, NCCL (rank 0)
  std::int64_t mem_needed_bytes = 0;
  std::int64_t mem_available_bytes = 0;
  // A plan (device "meta"): its memory is planned (device_overhead_bytes the modelled rest),
  // its speed the bound on the GPU it was planned for (0 without one); nothing was measured.
  bool planned = false;
  std::string plan_gpu;  // the GPU's name, "" for cpu plans
  double samples_per_s_bound = 0;
};

// Reads one metrics.h5, also while its run writes it; throws pfc::Error naming the file when
// it lacks the attributes.
BenchRun read_bench_run(const std::string& path);

// Whether the run has figures: it logged a row after its warm-up (a run stopped before that
// has none, whatever its status says), or it is a plan (planned figures).
bool measured(const BenchRun& run);

// An emulated run's speed had its step also spent the modelled collective time (pfc's
// collectives do not overlap its compute: the gradient all-reduce follows the backward, the
// classifier's gathers sit between its kernels): global batch / (step time + comm time).
// A real run's measured speed already includes them and is returned as it is.
double samples_per_s_with_comm(const BenchRun& run);

struct FoundRuns {
  std::vector<BenchRun> runs;                // sorted by path
  // "path: why": files that could not be read, folders that could not be searched
  std::vector<std::string> unreadable;
};

// Every file named metrics.h5 under each of `paths` (recursively, without following links to
// folders; a path may also name a file directly). A path that does not exist is a UsageError.
FoundRuns find_bench_runs(const std::vector<std::string>& paths);

}  // namespace pfc
