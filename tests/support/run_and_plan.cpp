#include "support/run_and_plan.h"

#include <algorithm>
#include <filesystem>

#include "config/load_config.h"
#include "io/hdf5.h"
#include "support/test_paths.h"

namespace pfc::test {

Config smoke_config(const std::vector<std::string>& sets, const std::string& output) {
  std::vector<std::string> all = {"steps=2", "frequent=1", "checkpoint_every=-1",
                                  "output=\"" + output + "\""};
  all.insert(all.end(), sets.begin(), sets.end());
  return load_config((std::filesystem::path(source_dir()) / "input" / "smoke.toml").string(), all);
}

std::vector<MemoryPeaks> recorded_peaks(const std::string& metrics_path) {
  const h5::File file(metrics_path, h5::Mode::read);
  const Tensor t = h5::read_tensor(file.id(), "/memory/peak_bytes_by_purpose", DType::i64);
  std::vector<MemoryPeaks> peaks(static_cast<std::size_t>(t.dim(0)));
  for (std::size_t r = 0; r < peaks.size(); ++r)
    std::copy_n(t.data<std::int64_t>() + r * kMemoryPurposeCount, kMemoryPurposeCount,
                peaks[r].begin());
  return peaks;
}

std::vector<std::int64_t> recorded_total_peaks(const std::string& metrics_path) {
  const h5::File file(metrics_path, h5::Mode::read);
  const Tensor t = h5::read_tensor(file.id(), "/steps/mem_peak_bytes", DType::i64);
  const std::int64_t ranks = t.dim(1);
  std::vector<std::int64_t> peaks(static_cast<std::size_t>(ranks), 0);
  for (std::int64_t row = 0; row < t.dim(0); ++row)
    for (std::int64_t r = 0; r < ranks; ++r)
      peaks[r] = std::max(peaks[r], t.data<std::int64_t>()[row * ranks + r]);
  return peaks;
}

}  // namespace pfc::test
