// A plan's memory is the run's: for a spread of configs, a meta backend planning the CPU
// backend has, per purpose, exactly the peaks a CPU run records in metrics.h5
// (/memory/peak_bytes_by_purpose), and the same total peak (/steps/mem_peak_bytes). Emulated
// ranks here; tests/mpi/plan_memory_test.cpp does the same on 1-3 real ranks.
#include <gtest/gtest.h>

#include <filesystem>

#include "backend/cpu/cpu_backend.h"
#include "backend/meta/meta_backend.h"
#include "comm/emulated_comm.h"
#include "plan/run_plan.h"
#include "support/run_and_plan.h"
#include "support/test_paths.h"
#include "train/trainer.h"

namespace pfc {
namespace {

struct Case {
  const char* name;
  std::vector<std::string> sets;
};

class PlanMemory : public ::testing::TestWithParam<Case> {};

TEST_P(PlanMemory, EqualsTheCpuRunsPeaksExactly) {
  const Case& c = GetParam();
  const std::string output = test::scratch_dir(c.name);
  const Config cfg = test::smoke_config(c.sets, output);
  const int world = static_cast<int>(cfg.emulate_world_size);
  const int rank = static_cast<int>(cfg.emulate_rank);

  CpuBackend cpu;
  EmulatedComm cpu_comm(world, rank, 150, 10, cpu);
  train(cfg, decide_run_start(cfg), cpu_comm, cpu, "plan_memory_test");
  const std::string metrics = (std::filesystem::path(output) / "metrics.h5").string();
  const std::vector<MemoryPeaks> run = test::recorded_peaks(metrics);

  Config planned = cfg;
  planned.device = "meta";
  planned.plan_for = "cpu";
  MetaBackend meta(BackendKind::cpu);
  EmulatedComm meta_comm(world, rank, 150, 10, meta);
  const Plan plan = make_plan(planned, meta_comm, meta, {2, nullptr, std::int64_t{1} << 40});

  ASSERT_EQ(run.size(), 1u);
  ASSERT_EQ(plan.ranks.size(), 1u);
  for (std::size_t p = 0; p < kMemoryPurposeCount; ++p)
    EXPECT_EQ(plan.ranks[0].exact_by_purpose[p], run[0][p])
        << memory_purpose_name(static_cast<MemoryPurpose>(p));
  EXPECT_EQ(plan.ranks[0].step_peak, test::recorded_total_peaks(metrics)[0]);
  EXPECT_GT(plan.ranks[0].step_peak, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Configs, PlanMemory,
    ::testing::Values(
        // 1001 classes over 4 ranks: shards of 251, 250, 250, 250; rank 3 plays a short one.
        Case{"pfc_fp32_rank3_of4_uneven",
             {"method=\"pfc\"", "sample_rate=0.3", "fp16=false", "num_classes=1001",
              "emulate_world_size=4", "emulate_rank=3"}},
        // fp16: f16 classifier GEMMs (the CPU backbone stays f32).
        Case{"pfc_fp16_rank0_of1", {"method=\"pfc\"", "fp16=true", "emulate_world_size=1"}},
        Case{"mp_fp16_rank1_of3_uneven",
             {"method=\"mp\"", "sample_rate=1.0", "fp16=true", "emulate_world_size=3",
              "emulate_rank=1"}},
        Case{"mp_fp32_rank0_of2",
             {"method=\"mp\"", "sample_rate=1.0", "fp16=false", "emulate_world_size=2"}},
        Case{"dp_fp16_rank2_of3",
             {"method=\"dp\"", "sample_rate=1.0", "fp16=true", "emulate_world_size=3",
              "emulate_rank=2"}},
        Case{"dp_fp32_constant_labels",
             {"method=\"dp\"", "sample_rate=1.0", "fp16=false", "synthetic_labels=\"constant\"",
              "emulate_world_size=2", "emulate_rank=1"}},
        // Class centres and their moments stored in 16 bits (classifier_storage).
        Case{"pfc_fp16_f16_storage_rank1_of3_uneven",
             {"method=\"pfc\"", "sample_rate=0.3", "fp16=true", "num_classes=1001",
              "classifier_storage=\"f16\"", "emulate_world_size=3", "emulate_rank=1"}},
        Case{"mp_fp32_bf16_storage_rank0_of2",
             {"method=\"mp\"", "sample_rate=1.0", "fp16=false", "classifier_storage=\"bf16\"",
              "emulate_world_size=2"}},
        Case{"pfc_adamw_f16_storage_rank0_of1",
             {"method=\"pfc\"", "optimizer=\"adamw\"", "lr=0.001", "classifier_storage=\"f16\"",
              "emulate_world_size=1"}},
        Case{"pfc_dense_f16_storage_rank1_of2",
             {"method=\"pfc\"", "classifier_update=\"dense\"", "classifier_storage=\"f16\"",
              "emulate_world_size=2", "emulate_rank=1"}}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace pfc
