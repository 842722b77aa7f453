// The collective watchdog on 2..3 ranks: a rank that arrives late but within the grace period
// only costs a warning; one that does not arrive makes every waiting rank throw
// CollectiveTimeout naming it (and the late rank, once it comes, takes over the verdict or
// completes); with timeout 0 a collective waits as long as it takes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <thread>

#include "comm/mpi_comm.h"

namespace pfc {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int last_rank() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size - 1;
}

// Every rank meets here at the end of a test, whatever its collectives did, so that a failed
// test leaves no rank behind in a collective the next test does not match.
struct MeetAtTheEnd {
  ~MeetAtTheEnd() { MPI_Barrier(MPI_COMM_WORLD); }
};

TEST(CollectiveWatchdog, ALateRankWithinTheGracePeriodIsOnlyAWarning) {
  const MeetAtTheEnd meet;
  MpiComm comm(MPI_COMM_WORLD, INT_MAX, 1.0);  // grace: 1 s
  if (comm.rank() == last_rank()) std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  try {
    EXPECT_EQ(comm.all_reduce_scalar(1.0, ReduceOp::sum), comm.world_size());
  } catch (const CollectiveTimeout& e) {
    ADD_FAILURE() << e.what();
  }
}

TEST(CollectiveWatchdog, ARankThatDoesNotArriveIsNamedByEveryWaitingRank) {
  const MeetAtTheEnd meet;
  MpiComm comm(MPI_COMM_WORLD, INT_MAX, 1.0);
  const int missing = last_rank();
  const Clock::time_point start = Clock::now();
  if (comm.rank() == missing) {
    // Busy elsewhere past the timeout and the grace period: it cannot answer.
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    try {
      comm.barrier();  // the others' barrier is still open: it completes, or the verdict waits
    } catch (const CollectiveTimeout& e) {
      EXPECT_NE(std::string(e.what()).find("found by rank"), std::string::npos) << e.what();
    }
  } else {
    try {
      comm.barrier();
      ADD_FAILURE() << "the barrier completed without rank " << missing;
    } catch (const CollectiveTimeout& e) {
      const std::string text = e.what();
      EXPECT_NE(text.find("collective #1 (barrier)"), std::string::npos) << text;
      EXPECT_NE(text.find(fmt::format("rank {} did not arrive", missing)), std::string::npos)
          << text;
      EXPECT_EQ(e.exit_code(), kExitFailure);
      const double waited = seconds_since(start);
      EXPECT_GE(waited, 1.9) << "timeout and grace are a second each";
      EXPECT_LT(waited, 3.4) << "the verdict took longer than timeout, grace and a margin";
    }
  }
}

TEST(CollectiveWatchdog, TimeoutZeroWaitsAsLongAsItTakes) {
  const MeetAtTheEnd meet;
  MpiComm comm(MPI_COMM_WORLD, INT_MAX, 0.0);
  if (comm.rank() == last_rank()) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(comm.all_reduce_scalar(2.0, ReduceOp::max), 2.0);
}

}  // namespace
}  // namespace pfc
