// Run control: the stop flag set by SIGTERM / SIGUSR1 at safe points, and PFC_FAULT parsing and
// firing.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/fault_injection.h"
#include "core/stop_signals.h"
#include "support/usage_error.h"

namespace pfc {
namespace {

TEST(RunControl, SignalsRequestAStop) {
  stop_at_safe_points(60);
  for (int signal_number : {SIGUSR1, SIGTERM}) {
    clear_stop_request();
    EXPECT_FALSE(stop_requested());
    ASSERT_EQ(std::raise(signal_number), 0);
    EXPECT_TRUE(stop_requested()) << "signal " << signal_number;
  }
  // SIGUSR1 stays handled: a second warning from the scheduler is harmless.
  clear_stop_request();
  ASSERT_EQ(std::raise(SIGUSR1), 0);
  EXPECT_TRUE(stop_requested());
  clear_stop_request();
  end_at_once_on_signals();
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGUSR1, SIG_DFL);
}

TEST(RunControl, ExplicitRequest) {
  clear_stop_request();
  request_stop();
  EXPECT_TRUE(stop_requested());
  clear_stop_request();
  EXPECT_FALSE(stop_requested());
}

TEST(RunControl, ParsesInjectedFaults) {
  EXPECT_FALSE(parse_injected_fault("").has_value());
  const auto fault = parse_injected_fault("rank:1,step:20");
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->rank, 1);
  EXPECT_EQ(fault->step, 20);
  const auto swapped = parse_injected_fault("step:7,rank:0");
  ASSERT_TRUE(swapped.has_value());
  EXPECT_EQ(swapped->rank, 0);
  EXPECT_EQ(swapped->step, 7);
}

TEST(RunControl, RejectsMalformedFaults) {
  for (const char* spec : {"rank:1", "step:3", "rank:x,step:2", "rank:1;step:2", "rank:-1,step:3",
                           "rank:1,step:2,rank:3", "node:1,step:2", "rank:1,step:", "rank1,step2",
                           "rank:1,step:2,", "rank:99999999999,step:1"}) {
    SCOPED_TRACE(spec);
    const std::string text = test::usage_error([&] { parse_injected_fault(spec); });
    EXPECT_NE(text.find("PFC_FAULT"), std::string::npos) << text;
  }
}

TEST(RunControl, ParsesFaultPoints) {
  EXPECT_EQ(parse_injected_fault("rank:1,step:20")->at, FaultPoint::step);
  const auto at_step = parse_injected_fault("at:step,step:4,rank:0");
  ASSERT_TRUE(at_step.has_value());
  EXPECT_EQ(at_step->at, FaultPoint::step);
  EXPECT_EQ(at_step->step, 4);
  const auto at_checkpoint = parse_injected_fault("rank:1,step:10,at:checkpoint");
  ASSERT_TRUE(at_checkpoint.has_value());
  EXPECT_EQ(at_checkpoint->rank, 1);
  EXPECT_EQ(at_checkpoint->step, 10);
  EXPECT_EQ(at_checkpoint->at, FaultPoint::checkpoint);
  const auto at_verification = parse_injected_fault("rank:1,step:4,at:verification");
  ASSERT_TRUE(at_verification.has_value());
  EXPECT_EQ(at_verification->at, FaultPoint::verification);
  EXPECT_NO_THROW(check_injected_fault(at_verification, 1, 4));
  try {
    check_injected_fault(at_verification, 1, 4, FaultPoint::verification);
    ADD_FAILURE() << "no fault";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "injected fault on rank 1 at the verification of step 4");
  }
  // No room for a checkpoint: strikes that rank at that step's checkpoint only.
  const auto no_room = parse_injected_fault("rank:1,step:4,at:no_room");
  ASSERT_TRUE(no_room.has_value());
  EXPECT_EQ(no_room->at, FaultPoint::no_room);
  EXPECT_TRUE(fault_strikes(no_room, 1, 4, FaultPoint::no_room));
  EXPECT_FALSE(fault_strikes(no_room, 0, 4, FaultPoint::no_room));
  EXPECT_FALSE(fault_strikes(no_room, 1, 6, FaultPoint::no_room));
  EXPECT_FALSE(fault_strikes(no_room, 1, 4, FaultPoint::step));
  EXPECT_NO_THROW(check_injected_fault(no_room, 1, 4));
}

TEST(RunControl, RejectsMalformedFaultPoints) {
  for (const char* spec : {"rank:1,step:2,at:", "rank:1,step:2,at:ckpt", "rank:1,step:2,at",
                           "rank:1,step:2,at:checkpoint,at:step", "at:checkpoint",
                           "rank:1,at:checkpoint", "rank:1,step:2,at:Checkpoint"}) {
    SCOPED_TRACE(spec);
    const std::string text = test::usage_error([&] { parse_injected_fault(spec); });
    EXPECT_NE(text.find("PFC_FAULT"), std::string::npos) << text;
  }
  // A wrong fault point names the ones there are.
  const std::string text =
      test::usage_error([] { parse_injected_fault("rank:1,step:2,at:ckpt"); });
  EXPECT_NE(text.find("at:checkpoint"), std::string::npos) << text;
  EXPECT_NE(text.find("at:no_room"), std::string::npos) << text;
}

TEST(RunControl, InjectedFaultFiresOnlyAtItsRankAndStep) {
  const auto fault = parse_injected_fault("rank:2,step:5");
  EXPECT_NO_THROW(check_injected_fault(fault, 2, 4));
  EXPECT_NO_THROW(check_injected_fault(fault, 1, 5));
  EXPECT_NO_THROW(check_injected_fault(std::nullopt, 2, 5));
  try {
    check_injected_fault(fault, 2, 5);
    FAIL() << "the fault did not fire";
  } catch (const UsageError&) {
    FAIL() << "an injected fault is a run failure, not a usage error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "injected fault on rank 2 at step 5");
  }
}

TEST(RunControl, AFaultForARankTheRunLacksIsRefused) {
  EXPECT_NO_THROW(check_fault_rank(std::nullopt, 2));
  EXPECT_NO_THROW(check_fault_rank(parse_injected_fault("rank:1,step:2"), 2));
  EXPECT_EQ(test::usage_error([] { check_fault_rank(parse_injected_fault("rank:9,step:2"), 2); }),
            "PFC_FAULT names rank 9, but this run has 2 ranks (0..1): the fault would never "
            "strike");
}

TEST(RunControl, CheckpointFaultDoesNotFireAtTheStep) {
  const auto fault = parse_injected_fault("rank:1,step:10,at:checkpoint");
  EXPECT_NO_THROW(check_injected_fault(fault, 1, 10));
}

TEST(RunControlDeathTest, CheckpointFaultKillsOnlyItsRankAndStep) {
  const auto fault = parse_injected_fault("rank:1,step:10,at:checkpoint");
  kill_at_checkpoint_fault(fault, 0, 10);
  kill_at_checkpoint_fault(fault, 1, 5);
  kill_at_checkpoint_fault(std::nullopt, 1, 10);
  // A fault at the step throws there; the checkpoint writer's point leaves it alone.
  kill_at_checkpoint_fault(parse_injected_fault("rank:1,step:10"), 1, 10);
  EXPECT_EXIT(kill_at_checkpoint_fault(fault, 1, 10), testing::KilledBySignal(SIGKILL),
              "rank 1 kills itself while writing checkpoint 10");
}

TEST(RunControl, ReadsTheFaultFromTheEnvironment) {
  ASSERT_EQ(setenv("PFC_FAULT", "rank:3,step:9", 1), 0);
  const auto fault = injected_fault_from_environment();
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->rank, 3);
  EXPECT_EQ(fault->step, 9);
  ASSERT_EQ(setenv("PFC_FAULT", "garbage", 1), 0);
  EXPECT_THROW(injected_fault_from_environment(), UsageError);
  ASSERT_EQ(unsetenv("PFC_FAULT"), 0);
  EXPECT_FALSE(injected_fault_from_environment().has_value());
}

}  // namespace
}  // namespace pfc
