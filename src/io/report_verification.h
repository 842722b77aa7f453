// The verification part of `pfc report`: for every run whose metrics.h5 holds /verification
// (val_targets during training), the accuracy against the step of each target, as Markdown
// and as CSV for jobs/plot_report.py --verification.
#pragma once

#include <string>
#include <vector>

#include "io/verification_metrics.h"

namespace pfc {

struct RunVerification {
  std::string path;  // the metrics.h5
  std::vector<VerificationSeries> series;
};

// The runs among `metrics_paths` with at least one verification row, in the given order.
std::vector<RunVerification> read_run_verifications(const std::vector<std::string>& metrics_paths);

// Per run a table: one row per step, one column per target, "accuracy ± std" (Accuracy-Flip).
std::string format_verification_markdown(const std::vector<RunVerification>& runs);

// Header: path,target,step,accuracy,accuracy_std,accuracy_noflip,xnorm,val_at_far,
// val_at_far_std,far; one line per verification of a target.
std::string format_verification_csv(const std::vector<RunVerification>& runs);

}  // namespace pfc
