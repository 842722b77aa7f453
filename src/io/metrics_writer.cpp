#include "io/metrics_writer.h"

#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <limits>

#include "config/config_to_toml.h"
#include "core/build_revision.h"
#include "io/hdf5_row_datasets.h"

namespace pfc {

namespace {

// The datasets of /steps, in the order a row is written. Units as UDUNITS spells them ("1":
// dimensionless), so that generic HDF5 tools can label axes.
struct StepColumn {
  const char* name;
  DType dtype;
  bool per_rank;
  const char* units;
  const char* description;
};

constexpr StepColumn kStepColumns[] = {
    {"step", DType::i64, false, "1", "optimizer steps done, those before a resume included"},
    {"wall_time_s", DType::f64, false, "s", "seconds since this process set started"},
    {"loss", DType::f64, false, "1", "mean loss over the steps since the previous row"},
    {"lr", DType::f64, false, "1", "learning rate of the row's last step"},
    {"loss_scale", DType::f64, false, "1", "fp16 loss scale after the row's last step"},
    {"samples_per_s", DType::f64, false, "samples/s",
     "images per second over the steps since the previous row, all ranks together"},
    {"skipped_records", DType::i64, false, "records",
     "damaged records skipped so far, all ranks together"},
    {"comm_time_s", DType::f64, false, "s",
     "modelled time of one step's collectives (emulated runs; 0 otherwise)"},
    {"step_time_s", DType::f64, true, "s", "each rank's time for the row's last step"},
    {"mem_in_use_bytes", DType::i64, true, "bytes",
     "each rank's allocated bytes after the row's last step"},
    {"mem_peak_bytes", DType::i64, true, "bytes",
     "each rank's peak allocated bytes during the row's last step"},
};

constexpr const char* kMemoryDataset = "/memory/peak_bytes_by_purpose";
// The first rows include warm-up (cuDNN autotuning, allocator growth): left out of medians,
// the first row always.
constexpr double kWarmupFraction = 0.2;

std::string iso_time_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc = {};
  gmtime_r(&now, &utc);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(std::max(length, 0)));
  while (!version.empty() && (version.back() == '\n' || version.back() == '\0'))
    version.pop_back();
  return version;
}

std::string hdf5_library_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return fmt::format("{}.{}.{}", major, minor, release);
}

std::string purpose_names() {
  std::string names;
  for (std::size_t p = 0; p < kMemoryPurposeCount; ++p) {
    if (p) names += ',';
    names += memory_purpose_name(static_cast<MemoryPurpose>(p));
  }
  return names;
}

// How many of n rows are warm-up.
std::size_t warmup_rows(std::size_t n) {
  const auto fraction =
      static_cast<std::size_t>(std::floor(kWarmupFraction * static_cast<double>(n)));
  return std::min(n, std::max<std::size_t>(1, fraction));
}

// Median of the values after the warm-up rows, NaNs left out; NaN when none is left.
double steady_median(const std::vector<double>& values) {
  const auto skip = static_cast<std::ptrdiff_t>(warmup_rows(values.size()));
  std::vector<double> steady;
  std::copy_if(values.begin() + skip, values.end(), std::back_inserter(steady),
               [](double v) { return !std::isnan(v); });
  if (steady.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto mid = steady.begin() + static_cast<std::ptrdiff_t>(steady.size() / 2);
  std::nth_element(steady.begin(), mid, steady.end());
  if (steady.size() % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(steady.begin(), mid));
}

double max_ignoring_nan(const double* values, std::int64_t n) {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (std::int64_t i = 0; i < n; ++i)
    if (!std::isnan(values[i]) && (std::isnan(best) || values[i] > best)) best = values[i];
  return best;
}

}  // namespace

MetricsWriter::MetricsWriter(h5::File file) : file_(std::move(file)) {}

MetricsWriter MetricsWriter::create(const std::string& path, const Config& cfg,
                                    const RunInfo& info) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  MetricsWriter writer(h5::File(path, h5::Mode::live_create));
  h5::write_attribute(writer.file_.id(), "/", "start_time", iso_time_now());
  writer.write_root_attributes(cfg, info);
  const std::int64_t ranks = info.emulated ? 1 : info.world_size;
  writer.create_tables(ranks);
  writer.create_memory_table(ranks);
  writer.describe_tables();
  create_verification_tables(writer.file_.id(), cfg.val_targets);
  writer.write_summary(RunOutcome{"running", "", 0, 0});
  writer.go_live();
  return writer;
}

MetricsWriter MetricsWriter::resume(const std::string& path, const Config& cfg,
                                    const RunInfo& info, std::int64_t resumed_step) {
  if (!std::filesystem::exists(path)) return create(path, cfg, info);
  MetricsWriter writer(h5::File(path, h5::Mode::live_read_write));
  if (writer.file_.cleared_stale_write_mark())
    spdlog::warn("{} was left open by a run that did not end cleanly (killed?); continuing it",
                 path);
  const hid_t id = writer.file_.id();
  PFC_CHECK(h5::exists(id, "/steps/step"),
            "metrics file '{}' has no /steps/step: not written by pfc; move it away to resume",
            path);
  // Rows logged after the checkpoint were lost with the run that wrote them; they are
  // computed again, so drop them rather than keep two rows for one step.
  const std::int64_t keep = h5::rows_through_step(id, "/steps/step", resumed_step);
  for (const std::string& name : h5::children(id, "/steps"))
    h5::truncate_rows(id, "/steps/" + name, keep);
  truncate_verification_rows(id, resumed_step);
  create_verification_tables(id, cfg.val_targets);

  std::vector<std::int64_t> resumes;
  if (h5::has_attribute(id, "/", "resumed_from_steps"))
    resumes = h5::read_attribute_ints(id, "/", "resumed_from_steps");
  resumes.push_back(resumed_step);
  h5::write_attribute(id, "/", "resumed_from_steps", resumes);
  writer.write_root_attributes(cfg, info);
  writer.reload_figures(info.emulated ? 1 : info.world_size);
  writer.describe_tables();
  writer.write_summary(RunOutcome{"running", "", 0, 0});
  writer.go_live();
  return writer;
}

void MetricsWriter::go_live() {
  file_.flush();
  if (!file_.start_swmr_write())
    spdlog::warn("{} is in an HDF5 format older than single-writer/multiple-reader (written by "
                 "an earlier pfc): the run continues it, but it can be read only once the run "
                 "has ended",
                 path());
}

void MetricsWriter::write_root_attributes(const Config& cfg, const RunInfo& info) {
  const hid_t id = file_.id();
  const auto text = [&](const char* name, const std::string& value) {
    h5::write_attribute(id, "/", name, value);
  };
  const auto integer = [&](const char* name, std::int64_t value) {
    h5::write_attribute(id, "/", name, value);
  };
  text("pfc_version", PFC_VERSION);
  text("git_revision", git_revision());
  text("command_line", info.command_line);
  text("config", config_to_toml(cfg));
  integer("world_size", info.world_size);
  integer("emulated", info.emulated ? 1 : 0);
  text("method", cfg.method);
  text("network", cfg.network);
  integer("num_classes", cfg.num_classes);
  h5::write_attribute(id, "/", "sample_rate", cfg.sample_rate);
  integer("batch_size", cfg.batch_size);
  integer("embedding_size", cfg.embedding_size);
  integer("fp16", cfg.fp16 ? 1 : 0);
  text("device", cfg.device);
  text("gpu_names", info.gpu_names);
  text("hosts", info.hosts);
  text("mpi_version", mpi_library_version());
  text("hdf5_version", hdf5_library_version());
  text("cuda_version", info.cuda_version);
  text("cudnn_version", info.cudnn_version);
  text("nccl_version", info.nccl_version);
  text("slurm_job_id", info.slurm_job_id);
  text("slurm_job_name", info.slurm_job_name);
  text("slurm_job_nodelist", info.slurm_job_nodelist);
  text("slurm_job_partition", info.slurm_job_partition);
  text("slurm_restart_count", info.slurm_restart_count);
}

void MetricsWriter::create_tables(std::int64_t ranks) {
  const hid_t id = file_.id();
  for (const StepColumn& column : kStepColumns)
    h5::create_appendable(id, fmt::format("/steps/{}", column.name), column.dtype,
                          column.per_rank ? ranks : 0);
  h5::require_group(id, "/summary");
}

void MetricsWriter::describe_tables() {
  const hid_t id = file_.id();
  for (const StepColumn& column : kStepColumns) {
    const std::string path = fmt::format("/steps/{}", column.name);
    h5::write_attribute(id, path, "units", column.units);
    h5::write_attribute(id, path, "description", column.description);
  }
  h5::write_attribute(id, kMemoryDataset, "units", "bytes");
  h5::write_attribute(id, kMemoryDataset, "purposes", purpose_names());
}

// [ranks, purposes] zeros: the table exists before the file goes live (it is then only
// overwritten); a resume on another number of ranks starts it again.
void MetricsWriter::create_memory_table(std::int64_t ranks) {
  const hid_t id = file_.id();
  if (h5::exists(id, kMemoryDataset))
    PFC_CHECK(H5Ldelete(id, kMemoryDataset, H5P_DEFAULT) >= 0, "cannot replace {} in {}",
              kMemoryDataset, path());
  memory_peaks_.assign(static_cast<std::size_t>(ranks), MemoryPeaks{});
  Tensor zeros = Tensor::host({ranks, static_cast<std::int64_t>(kMemoryPurposeCount)},
                              DType::i64);
  std::fill_n(zeros.data<std::int64_t>(), zeros.numel(), std::int64_t{0});
  h5::write_tensor(id, kMemoryDataset, zeros);
}

void MetricsWriter::reload_figures(std::int64_t ranks) {
  const hid_t id = file_.id();
  const auto column = [&](const char* name) {
    const Tensor t = h5::read_tensor(id, fmt::format("/steps/{}", name), DType::f64);
    return std::vector<double>(t.data<double>(), t.data<double>() + t.numel());
  };
  samples_per_s_ = column("samples_per_s");
  comm_time_s_ = column("comm_time_s");
  const Tensor step_time = h5::read_tensor(id, "/steps/step_time_s", DType::f64);
  const std::int64_t step_time_ranks = step_time.rank() == 2 ? step_time.dim(1) : 1;
  step_time_s_.clear();
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(samples_per_s_.size()); ++r)
    step_time_s_.push_back(
        max_ignoring_nan(step_time.data<double>() + r * step_time_ranks, step_time_ranks));
  const Tensor steps = h5::read_tensor(id, "/steps/step", DType::i64);
  last_step_ = steps.numel() ? steps.data<std::int64_t>()[steps.numel() - 1] : 0;
  const Tensor peaks = h5::read_tensor(id, "/steps/mem_peak_bytes", DType::i64);
  mem_peak_bytes_ = 0;
  for (std::int64_t i = 0; i < peaks.numel(); ++i)
    mem_peak_bytes_ = std::max(mem_peak_bytes_, peaks.data<std::int64_t>()[i]);
  const Shape memory_shape{ranks, static_cast<std::int64_t>(kMemoryPurposeCount)};
  if (!h5::exists(id, kMemoryDataset) || h5::dataset_shape(id, kMemoryDataset) != memory_shape) {
    create_memory_table(ranks);
    return;
  }
  const Tensor stored = h5::read_tensor(id, kMemoryDataset, DType::i64);
  memory_peaks_.assign(static_cast<std::size_t>(ranks), MemoryPeaks{});
  for (std::size_t r = 0; r < memory_peaks_.size(); ++r)
    for (std::size_t p = 0; p < kMemoryPurposeCount; ++p)
      memory_peaks_[r][p] = stored.data<std::int64_t>()[r * kMemoryPurposeCount + p];
}

void MetricsWriter::append(const StepMetrics& row) {
  const hid_t id = file_.id();
  const auto scalar = [&](const char* name, double value) {
    h5::append_row(id, fmt::format("/steps/{}", name), std::span<const double>(&value, 1));
  };
  h5::append_row(id, "/steps/step", std::span<const std::int64_t>(&row.step, 1));
  h5::append_row(id, "/steps/skipped_records",
                 std::span<const std::int64_t>(&row.skipped_records, 1));
  scalar("wall_time_s", row.wall_time_s);
  scalar("loss", row.loss);
  scalar("lr", row.lr);
  scalar("loss_scale", row.loss_scale);
  scalar("samples_per_s", row.samples_per_s);
  scalar("comm_time_s", row.comm_time_s);
  h5::append_row(id, "/steps/step_time_s", std::span<const double>(row.step_time_s));
  h5::append_row(id, "/steps/mem_in_use_bytes",
                 std::span<const std::int64_t>(row.mem_in_use_bytes));
  h5::append_row(id, "/steps/mem_peak_bytes", std::span<const std::int64_t>(row.mem_peak_bytes));

  last_step_ = row.step;
  samples_per_s_.push_back(row.samples_per_s);
  comm_time_s_.push_back(row.comm_time_s);
  step_time_s_.push_back(max_ignoring_nan(row.step_time_s.data(),
                                          static_cast<std::int64_t>(row.step_time_s.size())));
  for (std::int64_t peak : row.mem_peak_bytes) mem_peak_bytes_ = std::max(mem_peak_bytes_, peak);
  write_figures();
  file_.flush();
}

void MetricsWriter::record_memory(const std::vector<MemoryPeaks>& peaks_by_rank) {
  PFC_CHECK(peaks_by_rank.size() == memory_peaks_.size(),
            "{}: memory peaks of {} ranks for a table of {}", path(), peaks_by_rank.size(),
            memory_peaks_.size());
  for (std::size_t r = 0; r < peaks_by_rank.size(); ++r)
    for (std::size_t p = 0; p < kMemoryPurposeCount; ++p)
      memory_peaks_[r][p] = std::max(memory_peaks_[r][p], peaks_by_rank[r][p]);
  const auto ranks = static_cast<std::int64_t>(memory_peaks_.size());
  Tensor table = Tensor::host({ranks, static_cast<std::int64_t>(kMemoryPurposeCount)},
                              DType::i64);
  for (std::int64_t r = 0; r < ranks; ++r)
    std::copy(memory_peaks_[r].begin(), memory_peaks_[r].end(),
              table.data<std::int64_t>() + r * static_cast<std::int64_t>(kMemoryPurposeCount));
  h5::Handle dataset(H5Dopen2(file_.id(), kMemoryDataset, H5P_DEFAULT));
  PFC_CHECK(dataset.valid() && H5Dwrite(dataset.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL,
                                        H5P_DEFAULT, table.raw()) >= 0,
            "cannot write {} in {}", kMemoryDataset, path());
  file_.flush();
}

void MetricsWriter::record_device_overhead(std::int64_t bytes) {
  device_overhead_bytes_ = std::max(device_overhead_bytes_, bytes);
  h5::write_attribute(file_.id(), "/summary", "device_overhead_bytes", device_overhead_bytes_);
}

void MetricsWriter::append_verification(const std::string& target, const VerificationRow& row) {
  append_verification_row(file_.id(), target, row);
  file_.flush();
}

void MetricsWriter::finish(const RunOutcome& outcome) {
  // The one change of text while live: status and message are variable-length strings, whose
  // new values HDF5 stores in fresh heap space; a reader polling at that instant may have to
  // read the summary again.
  write_summary(outcome);
  file_.flush();
}

void MetricsWriter::write_summary(const RunOutcome& outcome) {
  const hid_t id = file_.id();
  h5::write_attribute(id, "/summary", "status", outcome.status);
  h5::write_attribute(id, "/summary", "message", outcome.message);
  h5::write_attribute(id, "/summary", "mem_needed_bytes", outcome.mem_needed_bytes);
  h5::write_attribute(id, "/summary", "mem_available_bytes", outcome.mem_available_bytes);
  write_figures();
}

void MetricsWriter::write_figures() {
  const hid_t id = file_.id();
  h5::write_attribute(id, "/summary", "steps", last_step_);
  h5::write_attribute(id, "/summary", "timed_rows",
                      static_cast<std::int64_t>(samples_per_s_.size() -
                                                warmup_rows(samples_per_s_.size())));
  h5::write_attribute(id, "/summary", "samples_per_s", steady_median(samples_per_s_));
  h5::write_attribute(id, "/summary", "step_time_s", steady_median(step_time_s_));
  h5::write_attribute(id, "/summary", "comm_time_s", steady_median(comm_time_s_));
  h5::write_attribute(id, "/summary", "mem_peak_bytes", mem_peak_bytes_);
  h5::write_attribute(id, "/summary", "device_overhead_bytes", device_overhead_bytes_);
}

}  // namespace pfc
