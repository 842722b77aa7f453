#include "io/report_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/error.h"

namespace pfc {

namespace {

int status_preference(const std::string& status) {
  if (status == "ok") return 3;
  if (status == "running") return 2;
  if (status == "out_of_memory") return 1;
  return 0;
}

bool better_run(const BenchRun& candidate, const BenchRun& current) {
  const int a = status_preference(candidate.status), b = status_preference(current.status);
  if (a != b) return a > b;
  return candidate.start_time > current.start_time;  // ISO 8601 UTC sorts as text
}

}  // namespace

std::string bench_column(const std::string& method, double sample_rate) {
  if (method == "dp") return "DP";
  if (method == "mp") return "MP";
  if (method == "pfc") return fmt::format("PFC {:g}", sample_rate);
  throw Error(fmt::format("unknown method '{}' in a metrics file (expected dp, mp or pfc)",
                          method));
}

const BenchCell& BenchTable::cell(std::int64_t row_identities, const std::string& column) const {
  const auto row = std::find(identities.begin(), identities.end(), row_identities);
  const auto col = std::find(columns.begin(), columns.end(), column);
  PFC_CHECK(row != identities.end() && col != columns.end(),
            "the report table has no cell for {} identities, column '{}'", row_identities,
            column);
  return cells[static_cast<std::size_t>(row - identities.begin())]
              [static_cast<std::size_t>(col - columns.begin())];
}

BenchCell& BenchTable::cell(std::int64_t row_identities, const std::string& column) {
  return const_cast<BenchCell&>(std::as_const(*this).cell(row_identities, column));
}

BenchTable build_bench_table(const std::vector<BenchRun>& runs) {
  BenchTable table;
  table.columns.assign(std::begin(kSeedColumns), std::end(kSeedColumns));
  table.identities = seed_benchmark_identities();
  std::vector<std::string> other_columns;
  for (const BenchRun& run : runs) {
    const std::string column = bench_column(run.method, run.sample_rate);
    if (std::find(table.columns.begin(), table.columns.end(), column) == table.columns.end() &&
        std::find(other_columns.begin(), other_columns.end(), column) == other_columns.end())
      other_columns.push_back(column);
    table.identities.push_back(run.num_classes);
  }
  // Further PFC sample rates after the seed's three columns, in ascending rate ("PFC 0.05"
  // before "PFC 0.2"): their text after "PFC " parses back to the rate.
  std::sort(other_columns.begin(), other_columns.end(), [](const auto& a, const auto& b) {
    return std::stod(a.substr(4)) < std::stod(b.substr(4));
  });
  table.columns.insert(table.columns.end(), other_columns.begin(), other_columns.end());
  std::sort(table.identities.begin(), table.identities.end());
  table.identities.erase(std::unique(table.identities.begin(), table.identities.end()),
                         table.identities.end());

  table.cells.assign(table.identities.size(), std::vector<BenchCell>(table.columns.size()));
  for (std::size_t r = 0; r < table.identities.size(); ++r)
    for (std::size_t c = 0; c < table.columns.size(); ++c)
      table.cells[r][c].seed = seed_figure(table.identities[r], table.columns[c]);
  for (const BenchRun& run : runs) {
    BenchCell& cell = table.cell(run.num_classes, bench_column(run.method, run.sample_rate));
    ++cell.runs_found;
    if (!cell.run || better_run(run, *cell.run)) cell.run = run;
  }
  return table;
}

}  // namespace pfc
