// The meta backend planning cuda against the CUDA backend itself: it accepts and refuses
// exactly the calls CUDA does (support/operand_check_cases.h), and a plan of a small run has,
// for every purpose but workspace, exactly the ledger peaks the CUDA backend's run has (both
// count the arena's 256-byte blocks); the CUDA backend's workspace holds at least the plan's
// plus the cuBLAS workspace it hands out at start.
#include <gtest/gtest.h>

#include <filesystem>

#include "backend/cuda/workspace_policy.h"
#include "backend/meta/meta_backend.h"
#include "comm/emulated_comm.h"
#include "gpu_test_support.h"
#include "plan/run_plan.h"
#include "support/operand_check_cases.h"
#include "support/run_and_plan.h"
#include "support/test_paths.h"
#include "train/trainer.h"

namespace pfc {
namespace {

TEST(GpuMetaBackend, ChecksOperandsAsTheCudaBackendDoes) {
  PFC_REQUIRE_GPU();
  MetaBackend meta(BackendKind::cuda);
  for (const test::OperandCase& c : test::operand_check_cases()) {
    std::string cuda_message, meta_message;
    const bool cuda_refuses = test::refuses(test::gpu_backend(), c, &cuda_message);
    test::gpu_backend().synchronize();
    EXPECT_EQ(cuda_refuses, test::refuses(meta, c, &meta_message))
        << c.name << ": cuda '" << cuda_message << "', meta '" << meta_message << "'";
  }
}

TEST(GpuMetaBackend, APlanHasTheCudaRunsPeaks) {
  PFC_REQUIRE_GPU();
  for (const bool fp16 : {false, true}) {
    const std::string output = test::scratch_dir(fp16 ? "fp16" : "fp32");
    const Config cfg = test::smoke_config(
        {"device=\"cuda\"", fp16 ? "fp16=true" : "fp16=false", "emulate_world_size=2",
         "emulate_rank=1", "num_classes=1001"},
        output);
    Backend& cuda = test::gpu_backend();
    EmulatedComm cuda_comm(2, 1, 150, 10, cuda);
    train(cfg, decide_run_start(cfg), cuda_comm, cuda, "gpu_meta_backend_test");
    const MemoryPeaks run =
        test::recorded_peaks((std::filesystem::path(output) / "metrics.h5").string())[0];

    Config planned = cfg;
    planned.device = "meta";
    planned.plan_for = "cuda";
    MetaBackend meta(BackendKind::cuda);
    EmulatedComm meta_comm(2, 1, 150, 10, meta);
    const Plan plan = make_plan(planned, meta_comm, meta, {2, nullptr, std::int64_t{1} << 40});
    for (std::size_t p = 0; p < kMemoryPurposeCount; ++p) {
      const auto purpose = static_cast<MemoryPurpose>(p);
      if (purpose == MemoryPurpose::workspace) {
        EXPECT_GE(run[p], plan.ranks[0].exact_by_purpose[p] +
                              static_cast<std::int64_t>(cuda::kCublasWorkspaceBytes));
      } else {
        EXPECT_EQ(plan.ranks[0].exact_by_purpose[p], run[p])
            << (fp16 ? "fp16 " : "fp32 ") << memory_purpose_name(purpose);
      }
    }
  }
}

}  // namespace
}  // namespace pfc
