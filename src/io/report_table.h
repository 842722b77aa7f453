// The benchmark table `pfc report` prints: one row per identity count (the seed's eleven plus
// any other that runs used), one column per way of holding the classifier (DP, MP, PFC at
// each sample rate), each cell holding our run and the seed's figure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/report_runs.h"
#include "io/report_seed.h"

namespace pfc {

// The column a run belongs to: "DP", "MP", or "PFC <sample rate>" ("PFC 0.1").
std::string bench_column(const std::string& method, double sample_rate);

struct BenchCell {
  std::optional<BenchRun> run;     // the run chosen for the cell, if any
  std::optional<SeedFigure> seed;  // the seed's figure, if it has one
  int runs_found = 0;              // how many runs fell in this cell
};

struct BenchTable {
  std::vector<std::string> columns;            // DP, MP, PFC 0.1, then others found
  std::vector<std::int64_t> identities;        // ascending
  std::vector<std::vector<BenchCell>> cells;   // [row][column]

  const BenchCell& cell(std::int64_t identities, const std::string& column) const;
  BenchCell& cell(std::int64_t identities, const std::string& column);
};

// Places each run in its cell. Where several runs share a cell, a finished one ("ok") wins
// over an unfinished one, that over out-of-memory, that over a failure; then the latest.
BenchTable build_bench_table(const std::vector<BenchRun>& runs);

}  // namespace pfc
