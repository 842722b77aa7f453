// metrics.h5's /verification group: one subgroup per verification target of the run, with a
// row per verification, extendable as /steps is:
//   /verification/<name>/  step i64, accuracy (Accuracy-Flip, mean over folds), accuracy_std,
//                          accuracy_noflip, xnorm, val_at_far (VAL at FAR 1e-3),
//                          val_at_far_std, far (the FAR reached), each [rows]
// The tables are created with the file (so that a file read while it is written never sees
// new objects appear); a run resumed after step s drops its rows of later steps.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pfc {

struct VerificationRow {
  std::int64_t step = 0;
  double accuracy = 0, accuracy_std = 0, accuracy_noflip = 0, xnorm = 0;
  double val_at_far = 0, val_at_far_std = 0, far = 0;
};

struct VerificationSeries {
  std::string name;  // the target, e.g. "lfw"
  std::vector<VerificationRow> rows;
};

// Creates the tables of each target that has none yet.
void create_verification_tables(hid_t file, const std::vector<std::string>& targets);
void append_verification_row(hid_t file, const std::string& target, const VerificationRow& row);
// Drops the rows of steps after `step` from every target's tables.
void truncate_verification_rows(hid_t file, std::int64_t step);
// Every target's rows; none when the file has no /verification.
std::vector<VerificationSeries> read_verification(hid_t file);

}  // namespace pfc
