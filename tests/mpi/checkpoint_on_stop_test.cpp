// A stop asked of one rank (SIGUSR1, as Slurm sends before the time limit) is agreed by every
// rank at the next step boundary, which then write a checkpoint together.
#include <gtest/gtest.h>
#include <mpi.h>

#include <csignal>

#include "comm/agree_to_stop.h"
#include "comm/mpi_comm.h"
#include "core/stop_signals.h"
#include "io/checkpoint_reader.h"
#include "io/checkpoint_writer.h"
#include "mpi/checkpoint_fixture.h"

namespace pfc {
namespace {

using namespace pfc::test;

TEST(CheckpointOnStop, NobodyAskedMeansGoOn) {
  MpiComm comm;
  clear_stop_request();
  EXPECT_FALSE(agree_to_stop(comm));
}

TEST(CheckpointOnStop, OneSignalledRankStopsEveryRank) {
  const auto root = shared_scratch("checkpoint_on_stop");
  MpiComm comm;
  stop_at_safe_points(60);
  clear_stop_request();
  for (std::int64_t step = 1; step <= 5; ++step) {
    if (step == 3 && comm.rank() == comm.world_size() - 1) ASSERT_EQ(std::raise(SIGUSR1), 0);
    if (!agree_to_stop(comm)) continue;
    EXPECT_EQ(step, 3);
    write_checkpoint(comm, root, checkpoint_at(step, comm.rank(), comm.world_size()), 2);
    break;
  }
  const auto latest = latest_checkpoint(root);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->step, 3);
  clear_stop_request();
  end_at_once_on_signals();
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGUSR1, SIG_DFL);
}

}  // namespace
}  // namespace pfc
