// The largest num_classes a config fits (plan/max_classes.h): the plan at the answer fits and
// the plan just beyond it does not; 16-bit class centres fit more classes than f32 ones when
// the centres dominate; a device too small for any class says so; and a count the planned
// backend cannot run does not fit.
#include <gtest/gtest.h>

#include "backend/meta/meta_backend.h"
#include "comm/emulated_comm.h"
#include "plan/max_classes.h"
#include "plan/run_plan.h"
#include "support/run_and_plan.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

constexpr double kResolution = 1e-3;

// smoke.toml planned for the CPU as rank 0 of 2, PFC 0.1 at a batch small enough that the
// class centres and their momentum dominate the need.
Config planned_config(const std::string& name) {
  Config cfg = test::smoke_config({"method=\"pfc\"", "sample_rate=0.1", "batch_size=4",
                                   "emulate_world_size=2"},
                                  test::scratch_dir(name));
  cfg.device = "meta";
  cfg.plan_for = "cpu";
  return cfg;
}

bool fits(const Config& cfg, const std::string& storage, std::int64_t classes,
          std::int64_t available) {
  Config probe = cfg;
  probe.classifier_storage = storage;
  probe.num_classes = classes;
  MetaBackend meta(BackendKind::cpu);
  EmulatedComm comm(2, 0, 150, 10, meta);
  return make_plan(probe, comm, meta, {1, nullptr, available}).fits();
}

TEST(PlanMaxClasses, ThePlanAtTheAnswerFitsAndJustBeyondItDoesNot) {
  const Config cfg = planned_config("max_classes");
  const std::int64_t available = std::int64_t{400} << 20;
  MetaBackend meta(BackendKind::cpu);
  EmulatedComm comm(2, 0, 150, 10, meta);
  const MaxClasses f32 =
      largest_num_classes(cfg, "f32", comm, meta, {1, nullptr, available}, kResolution);
  const MaxClasses f16 =
      largest_num_classes(cfg, "f16", comm, meta, {1, nullptr, available}, kResolution);
  for (const MaxClasses& m : {f32, f16}) {
    ASSERT_GT(m.num_classes, 0) << m.storage;
    EXPECT_LE(m.needed_bytes, available) << m.storage;
    EXPECT_TRUE(fits(cfg, m.storage, m.num_classes, available)) << m.storage;
    const auto beyond = static_cast<std::int64_t>(static_cast<double>(m.num_classes) *
                                                  (1 + kResolution)) + 1;
    EXPECT_FALSE(fits(cfg, m.storage, beyond, available)) << m.storage;
  }
  // Centres and momentum are nearly all of it: 16 bits fit close to twice as many.
  EXPECT_GT(f16.num_classes, f32.num_classes * 17 / 10);
  EXPECT_NE(describe_max_classes({f32, f16}).find("with classifier_storage = \"f16\""),
            std::string::npos);
}

TEST(PlanMaxClasses, ADeviceTooSmallForAnyClassSaysNone) {
  const Config cfg = planned_config("max_classes_none");
  MetaBackend meta(BackendKind::cpu);
  EmulatedComm comm(2, 0, 150, 10, meta);
  const MaxClasses none = largest_num_classes(cfg, "f16", comm, meta, {1, nullptr, 1024});
  EXPECT_EQ(none.num_classes, 0);
  EXPECT_GT(none.needed_bytes, 1024);
  EXPECT_EQ(describe_max_classes({none}), "none with classifier_storage = \"f16\"");
}

// An embedding of 1 on a petabyte: memory never runs out, but past 2^31 sampled rows a shard's
// GEMM is beyond OpenBLAS's 32-bit blasint. Those counts do not fit, and the table says why.
TEST(PlanMaxClasses, ACountTheBackendCannotRunDoesNotFit) {
  Config cfg = planned_config("max_classes_refused");
  cfg.embedding_size = 1;
  constexpr std::int64_t kPetabyte = std::int64_t{1} << 50;
  MetaBackend meta(BackendKind::cpu);
  EmulatedComm comm(2, 0, 150, 10, meta);
  const MaxClasses m =
      largest_num_classes(cfg, "f32", comm, meta, {1, nullptr, kPetabyte}, kResolution);
  EXPECT_GT(m.num_classes, 0);
  EXPECT_TRUE(fits(cfg, "f32", m.num_classes, kPetabyte));
  EXPECT_NE(m.refused.find("exceeds OpenBLAS's 32-bit blasint"), std::string::npos) << m.refused;
  EXPECT_NE(format_max_classes({m}, cfg, nullptr, 2).find("f32: the planned backend refuses"),
            std::string::npos);
}

}  // namespace
}  // namespace pfc
