#include "io/report_ijb.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/error.h"
#include "io/report_files.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

bool named_like_a_result(const fs::path& path) {
  std::string name = path.filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name.starts_with("ijb") && name.ends_with(".h5");
}

}  // namespace

FoundIjbResults find_ijb_results(const std::vector<std::string>& paths) {
  FoundIjbResults found;
  // Folders that cannot be listed are find_bench_runs' to report: it walks the same ones.
  std::vector<std::string> folder_problems;
  std::vector<std::string> files = report_files(paths, named_like_a_result, folder_problems);
  std::erase_if(files, [](const std::string& file) { return !is_ijb_result(file); });
  for (const std::string& file : files) {
    try {
      found.results.push_back(read_ijb_summary(file));
    } catch (const Error& e) {
      found.unreadable.push_back(file + ": " + e.what());
    }
  }
  return found;
}

std::string format_ijb_markdown(const std::vector<IjbSummary>& results) {
  std::string text =
      "## IJB 1:1 verification: TAR (%) at FAR (pfc ijb, eval_ijbc.py's protocol)\n\n"
      "| result | target | step | network |";
  std::string rule = "|---|---|---:|---|";
  for (const char* title : kIjbFarTitles) {
    text += fmt::format(" {} |", title);
    rule += "---:|";
  }
  text += " AUC (%) |\n" + rule + "---:|\n";
  for (const IjbSummary& r : results) {
    text += fmt::format("| {} | {} | {} | {} |", r.path, r.target, r.step, r.network);
    for (const double tar : r.tar_at_far) text += fmt::format(" {:.2f} |", tar * 100);
    text += fmt::format(" {:.4f} |\n", r.auc * 100);
  }
  return text;
}

}  // namespace pfc
