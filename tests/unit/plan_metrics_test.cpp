// A plan's metrics.h5 reads as a run's: pfc report puts it in its cell with the planned memory
// (pfc's tensors + the modelled rest), OOM with what it needs where it does not fit, and a
// speed-bound table instead of measured speeds; /plan holds the plan's own figures.
#include <gtest/gtest.h>

#include <cmath>

#include "io/hdf5.h"
#include "io/report_format.h"
#include "io/report_runs.h"
#include "io/report_table.h"
#include "plan/plan_metrics.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

constexpr std::int64_t kGB = 1'000'000'000;

Plan fake_plan(std::int64_t exact, std::int64_t available) {
  Plan plan;
  plan.gpu = &gpu_spec("v100");
  plan.world_size = 8;
  plan.global_batch = 1024;
  plan.steps = 2;
  RankPlan r;
  r.exact_by_purpose[static_cast<std::size_t>(MemoryPurpose::weights)] = exact;
  r.step_peak = r.exact_peak = exact;
  r.modelled = {{"cudnn_workspace", kGB, true, "test"}, {"cuda_context", kGB, false, "test"}};
  r.needed_bytes = exact + kGB;
  r.total_bytes = exact + 2 * kGB;
  r.available_bytes = available;
  plan.ranks = {r};
  plan.step.add("gemm", Work{1, 8e12, 0, 1e9, 1e9});
  StepBound b;
  b.step_s = 0.5;
  b.samples_per_s = 2048;
  b.limiter = "tensor cores";
  plan.bound = b;
  return plan;
}

void write_plan(const std::string& dir, const std::string& method, std::int64_t classes,
                const Plan& plan) {
  Config cfg;
  cfg.device = "meta";
  cfg.method = method;
  cfg.sample_rate = method == "pfc" ? 0.1 : 1.0;
  cfg.num_classes = classes;
  cfg.emulate_world_size = 8;
  RunInfo info;
  info.world_size = 8;
  info.emulated = true;
  write_plan_metrics(dir + "/metrics.h5", cfg, info, plan);
}

TEST(PlanMetrics, ThePlanReadsAsARunWithItsOwnFigures) {
  const std::string root = test::scratch_dir("plans");
  write_plan(root + "/fits", "pfc", 125'000, fake_plan(3 * kGB, 30 * kGB));
  write_plan(root + "/too_big", "dp", 29'000'000, fake_plan(40 * kGB, 30 * kGB));

  const BenchRun fits = read_bench_run(root + "/fits/metrics.h5");
  EXPECT_TRUE(fits.planned);
  EXPECT_EQ(fits.status, "ok");
  EXPECT_TRUE(std::isnan(fits.samples_per_s)) << "a plan measured a speed";
  EXPECT_EQ(fits.samples_per_s_bound, 2048.0);
  EXPECT_EQ(fits.mem_peak_bytes, 3 * kGB);
  EXPECT_EQ(fits.device_overhead_bytes, 2 * kGB);
  EXPECT_EQ(fits.plan_gpu, "Tesla V100-SXM2-32GB");
  const BenchRun too_big = read_bench_run(root + "/too_big/metrics.h5");
  EXPECT_EQ(too_big.status, "out_of_memory");
  EXPECT_EQ(too_big.mem_needed_bytes, 41 * kGB);
  EXPECT_EQ(too_big.mem_available_bytes, 30 * kGB);

  const std::string text = format_report_markdown(build_bench_table(find_bench_runs({root}).runs));
  EXPECT_EQ(text.find("## Training speed (samples/s"), std::string::npos) << text;
  const std::size_t bound = text.find("## Speed bound");
  ASSERT_NE(bound, std::string::npos) << text;
  EXPECT_NE(text.find("| 125 000 | – | 4681 | – | 4824 | 2048 | 5004 |", bound),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| 125 000 | – | 7.4 | – | 5.3 | 5.0 | 4.9 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 29 000 000 | OOM (needs 41.0 GB, 30.0 available) |"), std::string::npos)
      << text;
  EXPECT_NE(text.find("2 run(s): 8 ranks planned for Tesla V100-SXM2-32GB"), std::string::npos)
      << text;

  const h5::File file(root + "/fits/metrics.h5", h5::Mode::read);
  EXPECT_EQ(h5::read_attribute_string(file.id(), "/plan", "limiter"), "tensor cores");
  EXPECT_EQ(h5::read_attribute_int(file.id(), "/plan", "fits"), 1);
  const Tensor arithmetic = h5::read_tensor(file.id(), "/plan/arithmetic", DType::f64);
  ASSERT_EQ(arithmetic.shape(), (Shape{1, 5}));
  EXPECT_EQ(arithmetic.data<double>()[1], 8e12);
  EXPECT_EQ(h5::read_attribute_string(file.id(), "/plan/modelled_bytes", "names"),
            "cudnn_workspace,cuda_context");
}

}  // namespace
}  // namespace pfc
