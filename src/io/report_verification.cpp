#include "io/report_verification.h"

#include <fmt/format.h>

#include <map>

#include "io/hdf5.h"
#include "io/report_format.h"

namespace pfc {

std::vector<RunVerification> read_run_verifications(const std::vector<std::string>& metrics_paths) {
  std::vector<RunVerification> runs;
  for (const std::string& path : metrics_paths) {
    // A run may still be writing its file (SWMR): read it as a reader of a live file.
    const h5::File file(path, h5::Mode::live_read);
    RunVerification run{path, read_verification(file.id())};
    std::erase_if(run.series, [](const VerificationSeries& s) { return s.rows.empty(); });
    if (!run.series.empty()) runs.push_back(std::move(run));
  }
  return runs;
}

std::string format_verification_markdown(const std::vector<RunVerification>& runs) {
  std::string text = "## Verification: Accuracy-Flip (mean ± std over 10 folds) by step\n";
  for (const RunVerification& run : runs) {
    text += fmt::format("\n{}\n\n| step |", run.path);
    std::string rule = "\n|---:|";
    // step -> target column -> cell
    std::map<std::int64_t, std::vector<std::string>> rows;
    for (std::size_t t = 0; t < run.series.size(); ++t) {
      text += fmt::format(" {} |", run.series[t].name);
      rule += "---|";
      for (const VerificationRow& r : run.series[t].rows) {
        auto& cells = rows[r.step];
        cells.resize(run.series.size(), "–");
        cells[t] = fmt::format("{:.5f} ± {:.5f}", r.accuracy, r.accuracy_std);
      }
    }
    text += rule + "\n";
    for (const auto& [step, cells] : rows) {
      text += fmt::format("| {} |", step);
      for (const std::string& cell : cells) text += " " + cell + " |";
      text += "\n";
    }
  }
  return text;
}

std::string format_verification_csv(const std::vector<RunVerification>& runs) {
  std::string text =
      "path,target,step,accuracy,accuracy_std,accuracy_noflip,xnorm,val_at_far,"
      "val_at_far_std,far\n";
  for (const RunVerification& run : runs)
    for (const VerificationSeries& s : run.series)
      for (const VerificationRow& r : s.rows)
        text += fmt::format("{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f}\n",
                            csv_field(run.path), csv_field(s.name), r.step, r.accuracy,
                            r.accuracy_std, r.accuracy_noflip, r.xnorm, r.val_at_far,
                            r.val_at_far_std, r.far);
  return text;
}

}  // namespace pfc
