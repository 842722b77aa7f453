// The IJB part of `pfc report`: the results of `pfc ijb` (io/ijb_result_file.h) found beside
// the runs, one row per file with the TAR (%) at each of eval_ijbc.py's target FARs and the
// AUC, printed after the verification table.
#pragma once

#include <string>
#include <vector>

#include "io/ijb_result_file.h"

namespace pfc {

struct FoundIjbResults {
  std::vector<IjbSummary> results;       // sorted by path
  std::vector<std::string> unreadable;   // "path: why"
};

// The files named ijb*.h5 (any case) under each folder of `paths`, recursively, that pfc ijb
// wrote (others of that name are skipped), and any file of `paths` that pfc ijb wrote. Folders
// that cannot be listed are left to find_bench_runs (io/report_runs.h) to report.
FoundIjbResults find_ijb_results(const std::vector<std::string>& paths);

// "## IJB 1:1 verification: TAR (%) at FAR" and a table: file, target, step, network, one
// column per FAR (1e-06 ... 0.1, as eval_ijbc.py titles them), AUC (%).
std::string format_ijb_markdown(const std::vector<IjbSummary>& results);

}  // namespace pfc
