#include "app/golden_table.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace pfc {

namespace {

// NaN compares false with every bound: it becomes an infinite error, which fails visibly.
double finite_or_infinite(double e) { return std::isnan(e) ? INFINITY : e; }

std::string optional_figure(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : "-";
}

}  // namespace

double GoldenRule::bound(const TorchFp32Error& torch) const {
  const double larger = std::max(torch.cpu.value_or(0.0), torch.gpu.value_or(0.0));
  return std::max(floor, torch_factor * larger);
}

std::optional<double> GoldenRule::same_device(const TorchFp32Error& torch) const {
  const std::optional<double>& first = cuda ? torch.gpu : torch.cpu;
  return first ? first : (cuda ? torch.cpu : torch.gpu);
}

std::string GoldenRule::describe() const {
  std::string text = torch_factor > 0
                         ? fmt::format("each tensor within max({:.0e}, {:g} x arcface_torch's "
                                       "fp32 error)",
                                       floor, torch_factor)
                         : fmt::format("each tensor within {:.0e}", floor);
  if (median_rule)
    text += fmt::format("; median of error / arcface_torch's {} fp32 error at most 1",
                        cuda ? "GPU" : "CPU");
  return text;
}

GoldenRule golden_rule(const std::string& precision, bool cuda, double tolerance) {
  GoldenRule rule;
  rule.precision = precision;
  rule.cuda = cuda;
  if (precision == "fp64") {
    rule.floor = 1e-10;
  } else if (precision == "fp32") {
    rule.floor = 1e-4;
    rule.torch_factor = 4.0;
    rule.median_rule = true;
  } else {
    PFC_CHECK(precision == "fp16", "golden_rule: unknown precision '{}'", precision);
    rule.floor = 1e-2;
  }
  if (tolerance > 0) {
    rule.floor = tolerance;
    rule.torch_factor = 0;
  }
  return rule;
}

std::optional<double> GoldenRow::ratio() const {
  if (skipped || !torch || !(*torch > 0)) return std::nullopt;
  return error / *torch;
}

void GoldenTable::compare(const std::string& tensor, const double* ours,
                          const double* reference, std::int64_t n, const TorchFp32Error& torch,
                          const std::string& note, double scale) {
  double diff = 0, norm = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = ours[i] - reference[i];
    diff += d * d;
    norm += reference[i] * reference[i];
  }
  TorchFp32Error footing = torch;
  if (scale > 0) {
    // arcface_torch's error is relative to the reference's own L2; restate it against scale.
    const double to_scale = std::sqrt(norm) / scale;
    if (footing.cpu) *footing.cpu *= to_scale;
    if (footing.gpu) *footing.gpu *= to_scale;
    norm = scale * scale;
  }
  // A reference of all zeros is matched exactly or by absolute error.
  const double error = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  const double extra = allowance(tensor);
  rows_.push_back({tensor, n, finite_or_infinite(error), rule_.same_device(footing),
                   rule_.bound(footing) + extra, false,
                   extra > 0 ? fmt::format("{}{}bound + {:.2e}", note, note.empty() ? "" : "; ",
                                           extra)
                             : note,
                   extra > 0});
}

void GoldenTable::compare_scalar(const std::string& tensor, double ours, double reference,
                                 const TorchFp32Error& torch) {
  const double error = reference != 0 ? std::fabs(ours - reference) / std::fabs(reference)
                                      : std::fabs(ours);
  const double extra = allowance(tensor);
  rows_.push_back({tensor, 1, finite_or_infinite(error), rule_.same_device(torch),
                   rule_.bound(torch) + extra, false,
                   fmt::format("{:.12g} vs {:.12g}{}", ours, reference,
                               extra > 0 ? fmt::format("; bound + {:.2e}", extra) : ""),
                   extra > 0});
}

void GoldenTable::compare_exact(const std::string& tensor, const double* ours,
                                const double* reference, std::int64_t n,
                                const std::string& note) {
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(ours[i] - reference[i]);
    worst = std::max(worst, reference[i] != 0 ? d / std::fabs(reference[i]) : d);
  }
  rows_.push_back({tensor, n, finite_or_infinite(worst), std::nullopt, 0.0, false, note});
}

void GoldenTable::skip(const std::string& tensor, const std::string& why) {
  rows_.push_back({tensor, 0, 0, std::nullopt, 0, true, why});
}

void GoldenTable::allow(const std::string& tensor, double extra, const std::string& why) {
  PFC_CHECK(extra >= 0 && std::isfinite(extra), "golden: the allowance of {} is {}", tensor,
            extra);
  allowances_.emplace_back(tensor, extra);
  allowance_reason_ = why;
}

double GoldenTable::allowance(const std::string& tensor) const {
  for (const auto& [name, extra] : allowances_)
    if (tensor == name || tensor == name + ".sampled") return extra;
  return 0;
}

std::optional<double> GoldenTable::median_ratio() const {
  std::vector<double> ratios;
  for (const auto& r : rows_)
    if (const auto q = r.ratio(); q && !r.widened) ratios.push_back(*q);
  if (ratios.empty()) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  const std::size_t m = ratios.size() / 2;
  return ratios.size() % 2 ? ratios[m] : 0.5 * (ratios[m - 1] + ratios[m]);
}

int GoldenTable::failures() const {
  int n = 0;
  for (const auto& r : rows_) n += !r.passed();
  const auto median = median_ratio();
  if (rule_.median_rule && median && !(*median <= 1.0)) ++n;
  return n;
}

int GoldenTable::compared() const {
  int n = 0;
  for (const auto& r : rows_) n += !r.skipped;
  return n;
}

void GoldenTable::print() const {
  fmt::print("\n{}\nrule: {}\n", title_, rule_.describe());
  if (!allowance_reason_.empty())
    fmt::print("      plus, where a row says so, {} (those rows stay out of the median rule)\n",
               allowance_reason_);
  fmt::print("{:<44} {:>9} {:>10} {:>10} {:>8} {:>8}  {:<6} {}\n", "tensor", "elements", "error",
             "torch fp32", "ratio", "bound", "result", "");
  const GoldenRow* worst = nullptr;
  const GoldenRow* worst_ratio = nullptr;
  int skipped = 0;
  for (const auto& r : rows_) {
    if (r.skipped) {
      ++skipped;
      fmt::print("{:<44} {:>9} {:>10} {:>10} {:>8} {:>8}  {:<6} {}\n", r.tensor, "-", "-", "-",
                 "-", "-", "skip", r.note);
      continue;
    }
    fmt::print("{:<44} {:>9} {:>10.3e} {:>10} {:>8} {:>8.1e}  {:<6} {}\n", r.tensor, r.elements,
               r.error, optional_figure(r.torch, "{:.3e}"), optional_figure(r.ratio(), "{:.3g}"),
               r.bound, r.passed() ? "ok" : "FAIL", r.note);
    if (!worst || r.error > worst->error) worst = &r;
    if (r.ratio() && (!worst_ratio || *r.ratio() > *worst_ratio->ratio())) worst_ratio = &r;
  }
  fmt::print("{} compared, {} failed, {} skipped\n", compared(), failures(), skipped);
  if (worst) fmt::print("worst error {:.3e} ({})\n", worst->error, worst->tensor);
  if (const auto median = median_ratio()) {
    fmt::print("error / arcface_torch's fp32 error: median {:.3g}, worst {:.3g} ({}){}\n",
               *median, *worst_ratio->ratio(), worst_ratio->tensor,
               rule_.median_rule ? (*median <= 1.0 ? "; median rule ok" : "; median rule FAIL")
                                 : "");
  } else if (rule_.median_rule) {
    fmt::print("the file gives no arcface_torch fp32 errors: the median rule does not apply\n");
  }
}

}  // namespace pfc
