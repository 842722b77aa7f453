// A plan holds no data on the host either: what a run stages there (the batch, index uploads,
// initial values) is counted in the host ledger, byte for byte, with nothing behind it, and the
// class sampler only counts. So sizes that no host could hold are planned: each case below
// needs from hundreds of GB to TB of host memory if the plan held the values.
#include <gtest/gtest.h>

#include <algorithm>

#include "backend/meta/meta_backend.h"
#include "backend/meta/size_only_host_allocator.h"
#include "comm/emulated_comm.h"
#include "core/error.h"
#include "plan/run_plan.h"
#include "support/run_and_plan.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

TEST(SizeOnlyHostAllocator, CountsInTheHostLedgerAndHoldsNothing) {
  MemoryLedger& ledger = host_allocator().ledger();
  const std::int64_t before = ledger.snapshot().in_use[static_cast<std::size_t>(
      MemoryPurpose::data)];
  {
    // 4 TB: no host has it, and nothing is taken.
    const Tensor t = Tensor::empty({std::int64_t{1} << 40}, DType::f32,
                                   size_only_host_allocator(), MemoryPurpose::data);
    EXPECT_EQ(t.device(), DeviceKind::meta);
    EXPECT_EQ(ledger.snapshot().in_use[static_cast<std::size_t>(MemoryPurpose::data)] - before,
              std::int64_t{4} << 40);
    EXPECT_THROW(t.data<float>(), Error);
  }
  EXPECT_EQ(ledger.snapshot().in_use[static_cast<std::size_t>(MemoryPurpose::data)], before);
}

TEST(SizeOnlyHostAllocator, IsWhereHostCodeStagesForTheMetaBackend) {
  MetaBackend meta(BackendKind::cuda);
  EXPECT_EQ(&host_allocator_for(meta), &size_only_host_allocator());
  EXPECT_EQ(&meta.staging_allocator(), &size_only_host_allocator());
}

struct Case {
  const char* name;
  std::vector<std::string> sets;
};

class PlanHostMemory : public ::testing::TestWithParam<Case> {};

TEST_P(PlanHostMemory, SizesNoHostHoldsArePlanned) {
  const Case& c = GetParam();
  Config cfg = test::smoke_config(c.sets, test::scratch_dir(c.name));
  cfg.device = "meta";
  cfg.plan_for = "cpu";
  MetaBackend meta(BackendKind::cpu);
  const int world = std::max(1, static_cast<int>(cfg.emulate_world_size));
  EmulatedComm comm(world, 0, 150, 10, meta);
  const Plan plan = make_plan(cfg, comm, meta, {1, nullptr, std::int64_t{1} << 40});
  // The shard's class centres, f32, are all there...
  const std::int64_t centres = cfg.num_classes / world * cfg.embedding_size * 4;
  EXPECT_GE(plan.ranks[0].exact_by_purpose[static_cast<std::size_t>(MemoryPurpose::weights)],
            centres);
  // ...and the batch the host stages for the device is counted in the CPU plan's host buffers.
  const std::int64_t batch = cfg.batch_size * cfg.image_size * cfg.image_size * 3 * 4;
  const auto& modelled = plan.ranks[0].modelled;
  const auto host_buffers =
      std::find_if(modelled.begin(), modelled.end(),
                   [](const ModelledTerm& t) { return t.name == "host_buffers"; });
  ASSERT_NE(host_buffers, modelled.end());
  EXPECT_GE(host_buffers->bytes, batch);
  EXPECT_FALSE(plan.fits());
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, PlanHostMemory,
    ::testing::Values(
        // 2 x 10^12 classes as rank 0 of 1000 at sample rate 1: shards of 2 x 10^9 (the BLAS's
        // int bounds a shard's rows), whose host index took 16 GB.
        Case{"pfc_2e12_classes_over_1000_ranks",
             {"method=\"pfc\"", "sample_rate=1.0", "num_classes=2000000000000",
              "emulate_world_size=1000", "num_image=100000"}},
        // 2 x 10^9 classes at sample rate 0.5 with gradient accumulation: the micro-batches'
        // union of rows.
        Case{"pfc_2e9_classes_accumulated",
             {"method=\"pfc\"", "sample_rate=0.5", "num_classes=2000000000", "gradient_acc=2"}},
        // 65536-pixel images: a batch of 412 GB, and a 69 GB fully connected layer to initialise.
        Case{"image_size_65536", {"image_size=65536"}},
        // An embedding of 2^30: the fully connected layer's initial values take 550 GB.
        Case{"embedding_2_to_30", {"embedding_size=1073741824"}}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace pfc
