// metrics.h5's /verification: a table per val_targets file created with the file, rows
// appended and read back, a resume that trims the rows after its step (and adds a new
// target's tables), and pfc report's table and CSV of them.
#include <gtest/gtest.h>

#include "io/metrics_writer.h"
#include "io/report_verification.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

Config config_with(std::vector<std::string> targets) {
  Config cfg;
  cfg.val_targets = std::move(targets);
  return cfg;
}

VerificationRow at(std::int64_t step, double accuracy) {
  return {step, accuracy, 0.01, accuracy - 0.02, 20.5, 0.8, 0.05, 0.001};
}

TEST(VerificationMetrics, TablesExistFromTheStartAndRowsReadBack) {
  const std::string path = test::scratch_dir("verification_metrics") + "/metrics.h5";
  {
    MetricsWriter writer = MetricsWriter::create(path, config_with({"lfw", "cfp_fp"}), {});
    EXPECT_EQ(writer.verifications().size(), 2u);
    for (const VerificationSeries& s : writer.verifications()) EXPECT_TRUE(s.rows.empty());
    writer.append_verification("lfw", at(2000, 0.99));
    writer.append_verification("lfw", at(4000, 0.995));
    writer.append_verification("cfp_fp", at(2000, 0.9));
  }
  const h5::File file(path, h5::Mode::read);
  const std::vector<VerificationSeries> all = read_verification(file.id());
  ASSERT_EQ(all.size(), 2u);
  const VerificationSeries& lfw = all[0].name == "lfw" ? all[0] : all[1];
  ASSERT_EQ(lfw.rows.size(), 2u);
  EXPECT_EQ(lfw.rows[1].step, 4000);
  EXPECT_EQ(lfw.rows[1].accuracy, 0.995);
  EXPECT_EQ(lfw.rows[1].accuracy_noflip, 0.995 - 0.02);
  EXPECT_EQ(lfw.rows[1].xnorm, 20.5);
  EXPECT_EQ(lfw.rows[1].val_at_far, 0.8);
  EXPECT_EQ(lfw.rows[1].far, 0.001);
}

TEST(VerificationMetrics, AResumeDropsLaterRowsAndAddsNewTargets) {
  const std::string path = test::scratch_dir("verification_resume") + "/metrics.h5";
  {
    MetricsWriter writer = MetricsWriter::create(path, config_with({"lfw"}), {});
    for (std::int64_t step : {10, 20, 30}) writer.append_verification("lfw", at(step, 0.5));
  }
  {
    MetricsWriter writer = MetricsWriter::resume(path, config_with({"lfw", "agedb_30"}), {}, 20);
    writer.append_verification("agedb_30", at(30, 0.7));
  }
  const h5::File file(path, h5::Mode::read);
  for (const VerificationSeries& s : read_verification(file.id())) {
    if (s.name == "lfw") {
      ASSERT_EQ(s.rows.size(), 2u);
      EXPECT_EQ(s.rows.back().step, 20);
    } else {
      EXPECT_EQ(s.name, "agedb_30");
      ASSERT_EQ(s.rows.size(), 1u);
      EXPECT_EQ(s.rows[0].step, 30);
    }
  }
}

TEST(ReportVerification, TableAndCsvByStep) {
  const std::string dir = test::scratch_dir("report_verification");
  {
    MetricsWriter writer = MetricsWriter::create(dir + "/a.h5", config_with({"lfw", "cfp"}), {});
    writer.append_verification("lfw", at(100, 0.9));
    writer.append_verification("lfw", at(200, 0.95));
    writer.append_verification("cfp", at(200, 0.8));
  }
  { MetricsWriter::create(dir + "/none.h5", config_with({}), {}); }
  const auto runs = read_run_verifications({dir + "/a.h5", dir + "/none.h5"});
  ASSERT_EQ(runs.size(), 1u) << "a run without verification rows is left out";
  const std::string md = format_verification_markdown(runs);
  EXPECT_NE(md.find("| step | cfp | lfw |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 100 | – | 0.90000 ± 0.01000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 200 | 0.80000 ± 0.01000 | 0.95000 ± 0.01000 |"), std::string::npos)
      << md;
  const std::string csv = format_verification_csv(runs);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "path,target,step,accuracy,accuracy_std,accuracy_noflip,xnorm,val_at_far,"
            "val_at_far_std,far");
  EXPECT_NE(csv.find(dir + "/a.h5,lfw,200,0.950000,0.010000,0.930000,20.500000,0.800000,"
                           "0.050000,0.001000"),
            std::string::npos)
      << csv;
}

}  // namespace
}  // namespace pfc
