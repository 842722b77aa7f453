// A plan's memory is the run's, on real ranks: a CPU run on the world's ranks (MpiComm), then
// a meta backend planning it on the same ranks; every rank's per-purpose peaks in the plan
// equal those the run recorded for it in metrics.h5, exactly, including the ranks that hold a
// short shard (1001 classes do not split evenly over 2, 3 or 4 ranks).
#include <gtest/gtest.h>
#include <mpi.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/meta/meta_backend.h"
#include "comm/mpi_comm.h"
#include "plan/run_plan.h"
#include "support/run_and_plan.h"
#include "support/test_paths.h"
#include "train/trainer.h"

namespace pfc {
namespace {

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void expect_plan_equals_run(const std::string& name, const std::vector<std::string>& sets) {
  const std::string full = name + "_n" + std::to_string(world_size());
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) test::scratch_dir(full);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string output = test::scratch_path(full);
  const Config cfg = test::smoke_config(sets, output);
  {
    CpuBackend cpu;
    MpiComm comm;
    train(cfg, decide_run_start(cfg), comm, cpu, "plan_memory_test");
  }
  Config planned = cfg;
  planned.device = "meta";
  planned.plan_for = "cpu";
  MetaBackend meta(BackendKind::cpu);
  MpiComm comm;
  const Plan plan = make_plan(planned, comm, meta, {2, nullptr, std::int64_t{1} << 40});
  ASSERT_EQ(plan.ranks.size(), static_cast<std::size_t>(world_size()));
  if (rank != 0) return;
  const std::string metrics = output + "/metrics.h5";
  const std::vector<MemoryPeaks> run = test::recorded_peaks(metrics);
  const std::vector<std::int64_t> totals = test::recorded_total_peaks(metrics);
  ASSERT_EQ(run.size(), plan.ranks.size());
  for (std::size_t r = 0; r < run.size(); ++r) {
    for (std::size_t p = 0; p < kMemoryPurposeCount; ++p)
      EXPECT_EQ(plan.ranks[r].exact_by_purpose[p], run[r][p])
          << name << ": rank " << r << ", " << memory_purpose_name(static_cast<MemoryPurpose>(p));
    EXPECT_EQ(plan.ranks[r].step_peak, totals[r]) << name << ": rank " << r;
  }
}

TEST(PlanMemoryOnRanks, PfcFp16UnevenShards) {
  expect_plan_equals_run("pfc_fp16", {"method=\"pfc\"", "sample_rate=0.3", "fp16=true",
                                      "num_classes=1001"});
}

TEST(PlanMemoryOnRanks, MpFp32) {
  expect_plan_equals_run("mp_fp32",
                         {"method=\"mp\"", "sample_rate=1.0", "fp16=false", "num_classes=1001"});
}

TEST(PlanMemoryOnRanks, PfcFp16WithF16CentresUnevenShards) {
  expect_plan_equals_run("pfc_fp16_f16_storage",
                         {"method=\"pfc\"", "sample_rate=0.3", "fp16=true", "num_classes=1001",
                          "classifier_storage=\"f16\""});
}

TEST(PlanMemoryOnRanks, DpFp16) {
  expect_plan_equals_run("dp_fp16", {"method=\"dp\"", "sample_rate=1.0", "fp16=true"});
}

}  // namespace
}  // namespace pfc
