#include "app/golden_table.h"

#include <fmt/core.h>

#include <cmath>

namespace pfc {

void GoldenTable::compare(const std::string& tensor, const float* ours, const float* reference,
                          std::int64_t n, const std::string& note, double scale) {
  double diff = 0, norm = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(ours[i]) - reference[i];
    diff += d * d;
    norm += static_cast<double>(reference[i]) * reference[i];
  }
  if (scale > 0) norm = scale * scale;
  // A reference of all zeros is matched exactly or by absolute error.
  const double error = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  rows_.push_back({tensor, n, std::isnan(error) ? INFINITY : error, false, note});
}

void GoldenTable::compare_scalar(const std::string& tensor, double ours, double reference) {
  const double error = reference != 0 ? std::fabs(ours - reference) / std::fabs(reference)
                                      : std::fabs(ours);
  rows_.push_back({tensor, 1, std::isnan(error) ? INFINITY : error, false,
                   fmt::format("{:.6f} vs {:.6f}", ours, reference)});
}

void GoldenTable::skip(const std::string& tensor, const std::string& why) {
  rows_.push_back({tensor, 0, 0, true, why});
}

int GoldenTable::failures() const {
  int n = 0;
  for (const auto& r : rows_) n += !r.skipped && !(r.relative_error <= tolerance_);
  return n;
}

int GoldenTable::compared() const {
  int n = 0;
  for (const auto& r : rows_) n += !r.skipped;
  return n;
}

void GoldenTable::print() const {
  fmt::print("\n{} (tolerance {:.0e})\n", title_, tolerance_);
  fmt::print("{:<44} {:>9} {:>11}  {:<6} {}\n", "tensor", "elements", "rel.error", "result", "");
  for (const auto& r : rows_) {
    if (r.skipped) {
      fmt::print("{:<44} {:>9} {:>11}  {:<6} {}\n", r.tensor, "-", "-", "skip", r.note);
    } else {
      fmt::print("{:<44} {:>9} {:>11.3e}  {:<6} {}\n", r.tensor, r.elements, r.relative_error,
                 r.relative_error <= tolerance_ ? "ok" : "FAIL", r.note);
    }
  }
  int skipped = 0;
  for (const auto& r : rows_) skipped += r.skipped;
  fmt::print("{} compared, {} failed, {} skipped\n", compared(), failures(), skipped);
}

}  // namespace pfc
