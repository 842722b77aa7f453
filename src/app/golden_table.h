// The table `pfc golden` prints: one row per compared tensor with its relative error (L2 of
// the difference over L2 of the reference), arcface_torch's own fp32 error on the same
// problem where the file gives it, the ratio of the two, the bound the precision's rule sets
// for the row, and the verdict; then the worst error and the median and worst ratio.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/golden_file.h"

namespace pfc {

// What `pfc golden` accepts at one precision: every tensor within
// max(floor, torch_factor x the larger of arcface_torch's two fp32 errors), and, where
// median_rule is set, the median over tensors of (our error / arcface_torch's fp32 error on
// the same kind of device) at most 1.
struct GoldenRule {
  std::string precision;  // "fp64", "fp32" or "fp16"
  double floor = 0;
  double torch_factor = 0;
  bool median_rule = false;
  bool cuda = false;  // the ratio compares with arcface_torch's GPU run, else its CPU run

  double bound(const TorchFp32Error& torch) const;
  // arcface_torch's error on the same kind of device (the other one when only that is given).
  std::optional<double> same_device(const TorchFp32Error& torch) const;
  std::string describe() const;
};

// fp64: 1e-10; fp32: max(1e-4, 4 x arcface_torch's error) and the median rule; fp16: 1e-2.
// A positive `tolerance` replaces the per-tensor bound (the median rule stays).
GoldenRule golden_rule(const std::string& precision, bool cuda, double tolerance);

struct GoldenRow {
  std::string tensor;
  std::int64_t elements = 0;
  double error = 0;
  std::optional<double> torch;  // arcface_torch's fp32 error on the same footing as `error`
  double bound = 0;
  bool skipped = false;
  std::string note;  // why skipped, or what was compared (e.g. "every 64th element")
  // The bound was widened by an error measured apart (allow()): the row's error is not the
  // precision's alone, so it stays out of the median rule.
  bool widened = false;

  std::optional<double> ratio() const;
  bool passed() const { return skipped || error <= bound; }
};

class GoldenTable {
 public:
  GoldenTable(std::string title, GoldenRule rule)
      : title_(std::move(title)), rule_(std::move(rule)) {}

  // ours and reference hold n values each. The error is relative to the reference's L2, or
  // to `scale` when it is positive (a true value of zero, measured against a sibling's size;
  // arcface_torch's error, relative to the reference's own L2, is rescaled alike).
  void compare(const std::string& tensor, const double* ours, const double* reference,
               std::int64_t n, const TorchFp32Error& torch, const std::string& note = "",
               double scale = 0);
  void compare_scalar(const std::string& tensor, double ours, double reference,
                      const TorchFp32Error& torch);
  // Values that must equal the reference exactly, whatever the precision (the learning rate
  // each step applied, a double on every backend): the error is the largest relative
  // difference, the bound 0.
  void compare_exact(const std::string& tensor, const double* ours, const double* reference,
                     std::int64_t n, const std::string& note);
  void skip(const std::string& tensor, const std::string& why);
  // Widens the bound of the rows compared later under `tensor` (or `tensor`.sampled) by
  // `extra`: an error the precision's rule does not cover and that was measured apart
  // (16-bit class centres: what their rounding alone does to the exact result). `why` is
  // printed with the rule; those rows do not count in the median rule.
  void allow(const std::string& tensor, double extra, const std::string& why);
  const std::vector<GoldenRow>& rows() const { return rows_; }
  const GoldenRule& rule() const { return rule_; }

  void print() const;
  // Rows out of bounds, plus one when the median rule applies and fails.
  int failures() const;
  int compared() const;
  // The median of the rows' ratios (none when no row has one).
  std::optional<double> median_ratio() const;

 private:
  double allowance(const std::string& tensor) const;

  std::string title_;
  GoldenRule rule_;
  std::vector<GoldenRow> rows_;
  std::vector<std::pair<std::string, double>> allowances_;
  std::string allowance_reason_;
};

}  // namespace pfc
