// The table `pfc golden` prints: one row per compared tensor with its relative error
// (L2 of the difference over L2 of the reference), and the verdict against the tolerance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pfc {

struct GoldenRow {
  std::string tensor;
  std::int64_t elements = 0;
  double relative_error = 0;
  bool skipped = false;
  std::string note;  // why skipped, or what was compared (e.g. "every 64th element")
};

class GoldenTable {
 public:
  GoldenTable(std::string title, double tolerance) : title_(std::move(title)), tolerance_(tolerance) {}

  // ours and reference hold n values each. The error is relative to the reference's L2, or
  // to `scale` when it is positive.
  void compare(const std::string& tensor, const float* ours, const float* reference,
               std::int64_t n, const std::string& note = "", double scale = 0);
  void compare_scalar(const std::string& tensor, double ours, double reference);
  void skip(const std::string& tensor, const std::string& why);

  void print() const;
  int failures() const;
  int compared() const;

 private:
  std::string title_;
  double tolerance_;
  std::vector<GoldenRow> rows_;
};

}  // namespace pfc
