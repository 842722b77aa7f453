#include "eval/ijb_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "io/ijb_result_file.h"

namespace pfc {

namespace {

// PrettyTable's centring: of an odd excess, the extra space goes right of text of odd length
// and left of text of even length.
std::string centred(const std::string& text, std::size_t width) {
  const std::size_t excess = width - text.size();
  std::size_t left = excess / 2;
  if (excess % 2 == 1 && text.size() % 2 == 0) ++left;
  return std::string(left, ' ') + text + std::string(excess - left, ' ');
}

}  // namespace

std::string format_tar_table(const std::string& method, const std::array<double, 6>& tar) {
  std::vector<std::string> header = {"Methods"};
  std::vector<std::string> row = {method};
  for (std::size_t k = 0; k < tar.size(); ++k) {
    header.emplace_back(kIjbFarTitles[k]);
    row.push_back(fmt::format("{:.2f}", tar[k] * 100));
  }
  std::string rule = "+";
  std::string titles = "|";
  std::string values = "|";
  for (std::size_t c = 0; c < header.size(); ++c) {
    const std::size_t width = std::max(header[c].size(), row[c].size());
    rule += fmt::format("{}+", std::string(width + 2, '-'));
    titles += fmt::format(" {} |", centred(header[c], width));
    values += fmt::format(" {} |", centred(row[c], width));
  }
  return rule + "\n" + titles + "\n" + rule + "\n" + values + "\n" + rule + "\n";
}

}  // namespace pfc
