// `pfc report`'s table: runs found recursively in synthetic metrics.h5 files (written with
// MetricsWriter), placed in the seed's rows and columns beside the seed's figures, OOM and
// missing cells, duplicate runs, unreadable files, and the Markdown and CSV forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "io/hdf5.h"
#include "io/metrics_writer.h"
#include "io/report_format.h"
#include "io/report_runs.h"
#include "io/report_table.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kGB = 1'000'000'000;

struct FakeRun {
  std::string method;
  double sample_rate;
  std::int64_t num_classes;
  std::string status = "ok";
  double samples_per_s = 0;
  std::int64_t mem_peak_bytes = 0;
  std::int64_t needed = 0, available = 0;
  double comm_time_s = 0;  // > 0: an emulated run with this modelled comm time per step
  std::int64_t overhead = 0;  // device memory outside pfc's allocations
};

// A two-rank run's metrics.h5 at `dir`/metrics.h5 whose summary reads as `run` says.
void write_run(const std::string& dir, const FakeRun& run) {
  Config cfg;
  cfg.method = run.method;
  cfg.sample_rate = run.sample_rate;
  cfg.num_classes = run.num_classes;
  cfg.device = "cuda";
  cfg.batch_size = 128;
  RunInfo info;
  info.world_size = 2;
  info.emulated = run.comm_time_s > 0;
  info.gpu_names = "Tesla V100-SXM2-32GB,Tesla V100-SXM2-32GB";
  MetricsWriter writer = MetricsWriter::create(dir + "/metrics.h5", cfg, info);
  if (run.status != "out_of_memory") {
    for (int i = 0; i < 5; ++i) {
      StepMetrics row;
      row.step = 10 * (i + 1);
      row.samples_per_s = run.samples_per_s;
      row.comm_time_s = run.comm_time_s;
      row.step_time_s = {0.1, 0.1};
      row.mem_in_use_bytes = {run.mem_peak_bytes / 2, run.mem_peak_bytes / 2};
      row.mem_peak_bytes = {run.mem_peak_bytes / 2, run.mem_peak_bytes};
      writer.append(row);
    }
  }
  if (run.overhead > 0) writer.record_device_overhead(run.overhead);
  if (run.status != "running")
    writer.finish({run.status, run.status == "ok" ? "" : "did not work", run.needed,
                   run.available});
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string line_containing(const std::string& text, const std::string& part) {
  for (const std::string& line : lines_of(text))
    if (line.find(part) != std::string::npos) return line;
  return "";
}

class ReportTable : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = test::scratch_dir("report_table");
    write_run(root_ + "/row_1m/dp", {"dp", 1.0, 1'000'000, "ok", 2000, 24 * kGB});
    write_run(root_ + "/row_1m/mp", {"mp", 1.0, 1'000'000, "ok", 3500, 10 * kGB});
    write_run(root_ + "/row_1m/pfc", {"pfc", 0.1, 1'000'000, "ok", 4900, 5'600'000'000});
    write_run(root_ + "/row_2m/dp",
              {"dp", 1.0, 2'000'000, "out_of_memory", 0, 0, 40 * kGB, 32 * kGB});
    write_run(root_ + "/row_2m/pfc_0.2", {"pfc", 0.2, 2'000'000, "running", 4100, 7 * kGB});
    write_run(root_ + "/extra/3m/mp", {"mp", 1.0, 3'000'000, "failed"});
    // A second run of the 1M PFC cell that ended worse: the finished one is shown.
    write_run(root_ + "/again/pfc", {"pfc", 0.1, 1'000'000, "failed"});
    std::ofstream(root_ + "/row_1m/notes.txt") << "not a metrics file\n";
  }

  std::string root_;
};

TEST_F(ReportTable, FindsEveryMetricsFileAndReadsItsSummary) {
  const FoundRuns found = find_bench_runs({root_});
  ASSERT_EQ(found.runs.size(), 7u);
  EXPECT_TRUE(found.unreadable.empty());
  const auto dp = std::find_if(found.runs.begin(), found.runs.end(), [](const BenchRun& r) {
    return r.method == "dp" && r.num_classes == 1'000'000;
  });
  ASSERT_NE(dp, found.runs.end());
  EXPECT_EQ(dp->status, "ok");
  EXPECT_DOUBLE_EQ(dp->samples_per_s, 2000);
  EXPECT_EQ(dp->mem_peak_bytes, 24 * kGB);
  EXPECT_EQ(dp->world_size, 2);
  EXPECT_EQ(dp->device, "cuda");
  EXPECT_NE(dp->start_time, "");
}

TEST_F(ReportTable, PlacesRunsInTheSeedsRowsAndColumns) {
  const BenchTable table = build_bench_table(find_bench_runs({root_}).runs);
  EXPECT_EQ(table.columns, (std::vector<std::string>{"DP", "MP", "PFC 0.1", "PFC 0.2"}));
  // The seed's eleven identity counts plus 3 000 000, found in a run.
  ASSERT_EQ(table.identities.size(), 12u);
  EXPECT_EQ(table.identities.front(), 125'000);
  EXPECT_EQ(table.identities.back(), 29'000'000);
  EXPECT_NE(std::find(table.identities.begin(), table.identities.end(), 3'000'000),
            table.identities.end());

  const BenchCell& pfc = table.cell(1'000'000, "PFC 0.1");
  ASSERT_TRUE(pfc.run && pfc.seed);
  EXPECT_EQ(pfc.runs_found, 2);
  EXPECT_EQ(pfc.run->status, "ok");
  EXPECT_DOUBLE_EQ(pfc.seed->samples_per_s, 4803);
  EXPECT_DOUBLE_EQ(pfc.seed->memory_mb, 5620);
  EXPECT_FALSE(table.cell(125'000, "DP").run);
  EXPECT_TRUE(table.cell(125'000, "DP").seed);
  EXPECT_FALSE(table.cell(2'000'000, "DP").seed);  // the seed did not fit it either
  EXPECT_DOUBLE_EQ(table.cell(3'000'000, "MP").seed->samples_per_s, 2270);
  EXPECT_FALSE(table.cell(2'000'000, "PFC 0.2").seed);
  EXPECT_THROW(table.cell(1'000'000, "PFC 0.5"), Error);
}

TEST_F(ReportTable, MarkdownShowsOursBesideTheSeedAndWhyACellIsEmpty) {
  const std::string text = format_report_markdown(build_bench_table(find_bench_runs({root_}).runs));
  EXPECT_NE(text.find("| identities | DP | DP seed | MP | MP seed | PFC 0.1 | PFC 0.1 seed | "
                      "PFC 0.2 | PFC 0.2 seed |"),
            std::string::npos);
  EXPECT_NE(text.find("| 1 000 000 | 2000 | 2090 | 3500 | 3449 | 4900 | 4803 | – | – |"),
            std::string::npos) << text;
  EXPECT_NE(text.find("| 1 000 000 | 24.0 | 23.7 | 10.0 | 10.0 | 5.6 | 5.6 | – | – |"),
            std::string::npos) << text;
  EXPECT_NE(text.find("| 2 000 000 | OOM (needs 40.0 GB, 32.0 available) | – | – | 2593 |"),
            std::string::npos) << text;
  EXPECT_NE(line_containing(text, "| 2 000 000 | OOM").find("| 4100 (unfinished) |"),
            std::string::npos) << text;
  EXPECT_NE(line_containing(text, "| 3 000 000 |").find("| failed | 2270 |"), std::string::npos)
      << text;
  EXPECT_NE(line_containing(text, "| 125 000 |").find("| – | 4681 | – | 4824 | – | 5004 |"),
            std::string::npos) << text;
  EXPECT_NE(text.find("8 × Tesla V100-SXM2-32GB"), std::string::npos);  // ours: 2 ranks
  EXPECT_NE(text.find("2 × Tesla V100-SXM2-32GB"), std::string::npos);
}

TEST_F(ReportTable, CsvHasOneLinePerCellWithEveryField) {
  const std::string csv = format_report_csv(build_bench_table(find_bench_runs({root_}).runs));
  const std::vector<std::string> lines = lines_of(csv);
  // The seed's cells: 5 DP, 8 MP and 11 PFC 0.1, plus the headline pair at 3M (MP, PFC 0.1);
  // ours add 2M DP and 2M PFC 0.2, where the seed has no figure.
  ASSERT_EQ(lines.size(), 1u + 5 + 9 + 12 + 2);
  EXPECT_EQ(lines[0],
            "identities,column,status,samples_per_s,seed_samples_per_s,mem_peak_gb,seed_mem_gb,"
            "mem_needed_gb,mem_available_gb,world_size,emulated,device,gpu_names,path,"
            "samples_per_s_with_comm,mem_device_gb,network,setup,planned,samples_per_s_bound");
  for (const std::string& line : lines) {
    // gpu_names is quoted (it holds commas); count the fields outside quotes.
    int fields = 1;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++fields;
    }
    EXPECT_EQ(fields, 20) << line;
  }
  EXPECT_NE(csv.find("1000000,PFC 0.1,ok,4900.0,4803,5.600,5.620,,,2,0,cuda,"
                     "\"Tesla V100-SXM2-32GB,Tesla V100-SXM2-32GB\","),
            std::string::npos) << csv;
  EXPECT_NE(csv.find("2000000,DP,out_of_memory,,,,,40.000,32.000,2,0,cuda,"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find("29000000,PFC 0.1,missing,,1855,,32.324,,,,,,,,,,,,,\n"), std::string::npos)
      << csv;
}

// An emulated run measures compute only; the third table and the CSV's
// samples_per_s_with_comm add the modelled comm time to each step: 256 samples (2 ranks x 128)
// at 2560/s take 0.1 s, plus 0.06 s of comm: 1600/s. Without emulated runs there is no third
// table. The memory shown is the device's: our 5 GB plus 0.7 GB of context and libraries.
TEST_F(ReportTable, EmulatedRunsAlsoShowTheSpeedWithTheModelledComm) {
  EXPECT_EQ(format_report_markdown(build_bench_table(find_bench_runs({root_}).runs))
                .find("modelled communication"),
            std::string::npos);
  const std::string emulated = test::scratch_dir("report_emulated");
  write_run(emulated + "/row_0125k/mp",
            {"mp", 1.0, 125'000, "ok", 2560, 5 * kGB, 0, 0, 0.06, 700'000'000});
  const BenchTable table = build_bench_table(find_bench_runs({emulated}).runs);
  const std::string text = format_report_markdown(table);
  const std::size_t with_comm = text.find("## Training speed with the modelled communication");
  ASSERT_NE(with_comm, std::string::npos) << text;
  EXPECT_NE(text.find("| 125 000 | – | 4681 | 2560 | 4824 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 125 000 | – | 4681 | 1600 | 4824 |", with_comm), std::string::npos)
      << text;
  EXPECT_NE(text.find("| 125 000 | – | 7.4 | 5.7 | 5.3 |"), std::string::npos) << text;
  EXPECT_NE(format_report_csv(table).find("125000,MP,ok,2560.0,4824,5.000,5.306,,,2,1,cuda,"),
            std::string::npos);
  EXPECT_NE(format_report_csv(table).find("/row_0125k/mp/metrics.h5,1600.0,5.700,r50,"
                                          "2 ranks emulated on Tesla V100-SXM2-32GB,0,\n"),
            std::string::npos)
      << format_report_csv(table);
}

// A run that stopped before a step after its warm-up (one logged row, the warm-up's) has no
// figures: "not measured" in the tables, empty fields in the CSV, never a speed of 0.
TEST(ReportRuns, ARunStoppedBeforeATimedStepIsNotMeasured) {
  const std::string root = test::scratch_dir("report_not_measured");
  {
    Config cfg;
    cfg.method = "pfc";
    cfg.sample_rate = 0.1;
    cfg.num_classes = 125'000;
    RunInfo info;
    info.world_size = 1;
    MetricsWriter writer = MetricsWriter::create(root + "/row_0125k/pfc/metrics.h5", cfg, info);
    StepMetrics row;
    row.step = 2;
    row.samples_per_s = 10;
    row.step_time_s = {1.0};
    row.mem_in_use_bytes = {kGB};
    row.mem_peak_bytes = {kGB};
    writer.append(row);
    writer.finish({"ok", "stopped by signal", 0, 0});
  }
  const FoundRuns found = find_bench_runs({root});
  ASSERT_EQ(found.runs.size(), 1u);
  EXPECT_FALSE(measured(found.runs[0]));
  EXPECT_EQ(found.runs[0].timed_rows, 0);
  const BenchTable table = build_bench_table(found.runs);
  const std::string markdown = format_report_markdown(table);
  EXPECT_NE(markdown.find("| 125 000 | – | 4681 | – | 4824 | not measured |"), std::string::npos)
      << markdown;
  EXPECT_NE(format_report_csv(table).find("125000,PFC 0.1,ok,,5004,,4.868,,,1,0,cpu,"),
            std::string::npos)
      << format_report_csv(table);
}

TEST(ReportRuns, SkipsUnreadableFilesAndRejectsMissingFolders) {
  const std::string root = test::scratch_dir("report_unreadable");
  fs::create_directories(root + "/broken");
  std::ofstream(root + "/broken/metrics.h5") << "not HDF5";
  {
    h5::File other(root + "/metrics.h5", h5::Mode::create_truncate);
    h5::write_attribute(other.id(), "/", "title", std::string("something else"));
  }
  const FoundRuns found = find_bench_runs({root});
  EXPECT_TRUE(found.runs.empty());
  ASSERT_EQ(found.unreadable.size(), 2u);
  EXPECT_NE(found.unreadable[1].find("not a metrics file"), std::string::npos)
      << found.unreadable[1];
  EXPECT_THROW(find_bench_runs({root + "/absent"}), UsageError);
}

}  // namespace
}  // namespace pfc
