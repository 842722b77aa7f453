// `pfc report DIR...`: rebuilds the seed's two benchmark tables (speed, memory per GPU) from
// the metrics.h5 files that benchmark runs (jobs/bench_row.sh) or plans (jobs/plan_sweep.sh)
// wrote under DIR, ours beside the seed's figures; Markdown, CSV, or both, printed and
// optionally written to files. Runs that verified val_targets while training add a table of
// accuracy by step (and its CSV, for jobs/plot_report.py --verification), and results of
// `pfc ijb` a table of TAR at FAR beside it.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <memory>

#include "app/commands.h"
#include "core/error.h"
#include "io/report_format.h"
#include "io/report_ijb.h"
#include "io/report_runs.h"
#include "io/report_table.h"
#include "io/report_verification.h"

namespace pfc {

namespace {

struct ReportOptions {
  std::vector<std::string> paths;
  std::string format = "markdown";
  std::string csv_file;
  std::string verification_csv_file;
  std::string markdown_file;
};

void write_text_file(const std::string& path, const std::string& text, const char* what) {
  std::ofstream out(path);
  out << text;
  PFC_CHECK(out.good(), "report: cannot write the {} file '{}'", what, path);
}

int run_report(const ReportOptions& options) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return kExitOk;

  // pfc ijb's results named on the command line are not runs' metrics.h5.
  std::vector<std::string> run_paths;
  for (const std::string& path : options.paths)
    if (!is_ijb_result(path)) run_paths.push_back(path);
  const FoundRuns found = find_bench_runs(run_paths);
  const FoundIjbResults ijb = find_ijb_results(options.paths);
  for (const std::string& problem : found.unreadable)
    spdlog::warn("report: skipped {}", problem);
  for (const std::string& problem : ijb.unreadable) spdlog::warn("report: skipped {}", problem);
  if (found.runs.empty() && ijb.results.empty())
    throw Error(fmt::format("report: no readable metrics.h5 under {} (runs write "
                            "<output>/metrics.h5) and no result of pfc ijb",
                            fmt::join(options.paths, ", ")));
  if (found.runs.empty()) {
    fmt::print("{}", format_ijb_markdown(ijb.results));
    return kExitOk;
  }
  const BenchTable table = build_bench_table(found.runs);
  for (std::size_t r = 0; r < table.identities.size(); ++r)
    for (std::size_t c = 0; c < table.columns.size(); ++c)
      if (table.cells[r][c].runs_found > 1)
        spdlog::info("report: {} runs for {} identities, {}; showing {}",
                     table.cells[r][c].runs_found, table.identities[r], table.columns[c],
                     table.cells[r][c].run->path);

  if (options.format != "csv") fmt::print("{}", format_report_markdown(table));
  if (options.format == "both") fmt::print("\n");
  if (options.format != "markdown") fmt::print("{}", format_report_csv(table));
  if (!options.csv_file.empty()) write_text_file(options.csv_file, format_report_csv(table), "CSV");
  if (!options.markdown_file.empty())
    write_text_file(options.markdown_file, format_report_markdown(table), "Markdown");

  const bool show_verification = options.format != "csv";
  if (!show_verification && options.verification_csv_file.empty()) return kExitOk;
  std::vector<std::string> paths;
  for (const BenchRun& run : found.runs) paths.push_back(run.path);
  const std::vector<RunVerification> verified = read_run_verifications(paths);
  if (!verified.empty() && show_verification)
    fmt::print("\n{}", format_verification_markdown(verified));
  // IJB-B/C beside the .bin verification: the two ways a trained network is judged.
  if (!ijb.results.empty() && show_verification)
    fmt::print("\n{}", format_ijb_markdown(ijb.results));
  if (!options.verification_csv_file.empty())
    write_text_file(options.verification_csv_file, format_verification_csv(verified),
                    "verification CSV");
  return kExitOk;
}

}  // namespace

CommandRunner add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Rebuild the benchmark tables (speed, GB per GPU) from runs' metrics.h5 files");
  cmd->add_option("dirs", options->paths,
                  "folders searched recursively for metrics.h5 (and pfc ijb's ijb*.h5)")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--format", options->format, "what to print: markdown, csv or both")
      ->check(CLI::IsMember({"markdown", "csv", "both"}))
      ->capture_default_str();
  cmd->add_option("--csv", options->csv_file, "also write the CSV table to this file");
  cmd->add_option("--markdown", options->markdown_file,
                  "also write the Markdown tables to this file");
  cmd->add_option("--verification-csv", options->verification_csv_file,
                  "write the runs' verification accuracy by step (val_targets) to this CSV "
                  "file, for jobs/plot_report.py --verification");
  return [options] { return run_report(*options); };
}

}  // namespace pfc
