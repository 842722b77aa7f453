// The table eval_ijbc.py prints: TAR (%) at each target FAR, as its PrettyTable draws it, so
// that a log of `pfc ijb` reads as one of the script:
//   +-----------+-------+-------+--------+-------+-------+-------+
//   |  Methods  | 1e-06 | 1e-05 | 0.0001 | 0.001 |  0.01 |  0.1  |
//   +-----------+-------+-------+--------+-------+-------+-------+
//   | ijbc-IJBC | 89.33 | 94.47 | 96.37  | 97.71 | 98.61 | 99.25 |
//   +-----------+-------+-------+--------+-------+-------+-------+
#pragma once

#include <array>
#include <string>

namespace pfc {

// `method`: the row's name (the script's "ijbc-IJBC"); tar: fractions at 1e-6 ... 1e-1,
// printed as percentages with two decimals.
std::string format_tar_table(const std::string& method, const std::array<double, 6>& tar);

}  // namespace pfc
