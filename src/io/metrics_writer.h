// output/<run>/metrics.h5: what a run measured, step by step, for `pfc report` and for anyone
// with h5py. Rank 0 writes it (serial HDF5); per-rank figures arrive already gathered. Every
// append is flushed, so a killed run keeps its rows. Floating-point values are f64.
//
// It can be read while the run writes it: the file is in HDF5's single-writer/multiple-reader
// mode (SWMR) from the moment it is set up until the run ends; readers open it with
// h5py.File(path, "r", swmr=True) (a reader without swmr=True is refused while the run is on).
// SWMR lets the writer only grow datasets and overwrite values, so every dataset, group and
// attribute exists before it starts (create_tables, write_summary): a feature that adds
// datasets creates them there, never once the run is live. The summary's numbers are
// overwritten in place after every row; its text (status, message) changes once, at the end.
//
//   /          attributes: pfc_version, git_revision, command_line, config (the full TOML),
//              world_size, emulated (0/1), method, network, num_classes, sample_rate,
//              batch_size (per rank), embedding_size, fp16 (0/1), device, gpu_names (each
//              rank's device, e.g. "cuda:0 (NVIDIA H200)"), hosts, mpi_version, hdf5_version,
//              cuda_version, cudnn_version, nccl_version, slurm_job_id, slurm_job_name,
//              slurm_job_nodelist, slurm_job_partition, slurm_restart_count ("" when not under
//              Slurm), start_time (ISO 8601, UTC), resumed_from_steps (i64 array; after a
//              resume only). After a resume they describe the process set now running.
//   /steps/    one row per logged step, every dataset n rows long (chunked, extendible), each
//              with attributes units ("1": dimensionless) and description:
//              step i64, wall_time_s, loss, lr, loss_scale, samples_per_s (all ranks together),
//              skipped_records i64, comm_time_s (estimated; 0 unless emulated), and per rank
//              [n, ranks]: step_time_s, mem_in_use_bytes i64, mem_peak_bytes i64. A rank
//              column nobody wrote in a row (a resume on more ranks) reads NaN / -1.
//   /memory/peak_bytes_by_purpose  [ranks, purposes] i64, the peak of each purpose so far
//              (0 before the first row); attribute purposes: the purpose names,
//              comma-separated, in column order
//   /verification/<target>/  a row per verification of a val_targets file (layout in
//              io/verification_metrics.h): step, accuracy, accuracy_std, accuracy_noflip,
//              xnorm, val_at_far, ...
//   /summary   attributes: status ("running" | "ok" | "out_of_memory" | "diverged" (the loss
//              or the weights stopped being finite) | "failed"), steps (the
//              last logged step), timed_rows (the rows the medians are over: all but the first
//              row and the first 20 %; 0 = not measured), samples_per_s, step_time_s (slowest
//              rank), comm_time_s (medians over the timed rows; NaN when there are none),
//              mem_peak_bytes (max over ranks and rows), device_overhead_bytes (rank 0's device
//              memory outside pfc's allocations: CUDA context, libraries, NCCL; the largest
//              seen), mem_needed_bytes, mem_available_bytes (out_of_memory), message
//
// Reading it, during the run or after:
//   import h5py
//   f = h5py.File("output/run/metrics.h5", "r", swmr=True)
//   print(f.attrs["method"], f.attrs["num_classes"], f["summary"].attrs["samples_per_s"])
//   s = f["steps"]
//   print(s["step"][:], s["samples_per_s"][:], s["mem_peak_bytes"][:].max(axis=1))
//   s["step"].refresh()  # later: the rows appended since (refresh each dataset read)
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/memory_ledger.h"
#include "io/hdf5.h"
#include "io/verification_metrics.h"

namespace pfc {

// What the config does not say about a run.
struct RunInfo {
  std::string command_line;
  std::int64_t world_size = 1;  // the modelled world when emulating
  bool emulated = false;
  std::string gpu_names;        // one entry per rank, comma-separated
  std::string hosts;
  std::string cuda_version;     // "" when not built with CUDA
  std::string cudnn_version;
  std::string nccl_version;
  // Slurm's SLURM_* variables of the job ("" outside Slurm).
  std::string slurm_job_id;
  std::string slurm_job_name;
  std::string slurm_job_nodelist;
  std::string slurm_job_partition;
  std::string slurm_restart_count;
};

struct StepMetrics {
  std::int64_t step = 0;
  double wall_time_s = 0, loss = 0, lr = 0, loss_scale = 1, samples_per_s = 0;
  std::int64_t skipped_records = 0;
  double comm_time_s = 0;
  std::vector<double> step_time_s;             // one value per rank
  std::vector<std::int64_t> mem_in_use_bytes;  // one value per rank
  std::vector<std::int64_t> mem_peak_bytes;    // one value per rank
};

struct RunOutcome {
  std::string status = "ok";  // "ok" | "out_of_memory" | "diverged" | "failed"
  std::string message;
  std::int64_t mem_needed_bytes = 0;
  std::int64_t mem_available_bytes = 0;
};

class MetricsWriter {
 public:
  // A fresh file at `path` (any file there is replaced).
  static MetricsWriter create(const std::string& path, const Config& cfg, const RunInfo& info);
  // Continues the file of a run resumed after `resumed_step`: rows with a later step are
  // dropped, the root attributes describe this process set (start_time is kept). A missing
  // file is created.
  // A file an older pfc wrote (before SWMR) is continued, but can be read only once the run
  // has ended (a warning says so).
  static MetricsWriter resume(const std::string& path, const Config& cfg, const RunInfo& info,
                              std::int64_t resumed_step);

  void append(const StepMetrics& row);
  // Each rank's peak bytes by purpose since the last call; the file keeps the maximum.
  void record_memory(const std::vector<MemoryPeaks>& peaks_by_rank);
  // The device memory outside pfc's allocations; the file keeps the largest.
  void record_device_overhead(std::int64_t bytes);
  // One verification of the val_targets file `target`.
  void append_verification(const std::string& target, const VerificationRow& row);
  // The verifications recorded so far (those of earlier attempts, after a resume).
  std::vector<VerificationSeries> verifications() const { return read_verification(file_.id()); }
  void finish(const RunOutcome& outcome);

  const std::string& path() const { return file_.path(); }

 private:
  explicit MetricsWriter(h5::File file);
  void write_root_attributes(const Config& cfg, const RunInfo& info);
  void create_tables(std::int64_t ranks);
  void describe_tables();
  void create_memory_table(std::int64_t ranks);
  void reload_figures(std::int64_t ranks);
  void write_summary(const RunOutcome& outcome);
  void write_figures();
  void go_live();

  h5::File file_;
  std::vector<double> samples_per_s_, step_time_s_, comm_time_s_;
  std::int64_t last_step_ = 0;
  std::int64_t mem_peak_bytes_ = 0;
  std::int64_t device_overhead_bytes_ = 0;
  std::vector<MemoryPeaks> memory_peaks_;
};

}  // namespace pfc
