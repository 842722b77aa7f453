// Collectives with a deadline, as PyTorch's NCCL watchdog gives its process groups. A blocking
// MPI collective waits forever for a rank that never arrives (stopped by SIGSTOP, hung in I/O,
// deadlocked); MpiComm therefore starts each collective non-blocking and waits for it here, with
// MPI_Test, until it completes or `timeout_s` passes.
//
// Who did not arrive, over a side channel (a duplicate communicator, point-to-point messages):
// every rank waiting in a collective answers its peers' questions. A rank whose collective
// times out asks every peer which collective it waits in and waits a grace period
// (timeout/4, 1..60 s) for the answers: a peer that does not answer is not in any collective
// (stopped, hung, or busy elsewhere for that long) and did not arrive. The rank then tells the
// peers that answered (its verdict); a peer that hears a verdict before its own deadline takes
// it over. Each waiting rank waits until the others it heard from have reached the verdict, so
// that every live rank reports before the first one ends the job (ProcessContext aborts it).
// The side channel lives as long as the process (see the destructor).
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace pfc {

// A collective that did not complete in time. Exit code 1, like any failed run.
class CollectiveTimeout : public Error {
 public:
  using Error::Error;
};

class CollectiveWatchdog {
 public:
  // Watches collectives on `comm` (the side channel runs on a duplicate of it). timeout_s 0
  // waits forever, as plain MPI does.
  CollectiveWatchdog(MPI_Comm comm, double timeout_s);
  ~CollectiveWatchdog();
  CollectiveWatchdog(const CollectiveWatchdog&) = delete;
  CollectiveWatchdog& operator=(const CollectiveWatchdog&) = delete;

  // Waits for `request`, the collective `what` that every rank has just started (in the same
  // order on every rank). Throws CollectiveTimeout naming the ranks that did not arrive.
  void wait(MPI_Request& request, const char* what);

  // Whether a wait gave up on its collective: MPI may still work on it, so its communicator
  // must not be freed (Open MPI's non-blocking collectives touch a freed one).
  bool abandoned() const { return verdict_.has_value(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Verdict {
    std::vector<std::int64_t> missing;  // ranks that did not arrive
    std::vector<std::int64_t> live;     // ranks that answered, this one included
    int from = -1;                      // the rank that reached it; -1: this one
  };

  // Answers questions, records answers, takes over a verdict. True when a verdict arrived.
  bool serve_side_channel();
  // Past the deadline: asks around. Throws when a rank did not arrive or waits in another
  // collective; returns when the collective completed meanwhile (true) or every rank is in it
  // and it is still under way (false: wait another timeout).
  bool investigate(MPI_Request& request, const char* what, Clock::time_point started);
  [[noreturn]] void conclude(const char* what, double waited_s);
  void send(int peer, int tag, std::vector<std::int64_t> message);
  void forget_sent();

  std::int64_t instance_;  // the how-manieth watchdog of this process (and of every rank)
  MPI_Comm side_ = MPI_COMM_NULL;
  int rank_ = 0;
  int world_ = 1;
  double timeout_s_;
  std::int64_t sequence_ = 0;  // collectives waited for so far; the current one's number
  std::vector<std::optional<std::int64_t>> answers_;  // per peer: the collective it waits in
  std::optional<Verdict> verdict_;
  std::vector<bool> peer_concluded_;
  struct Sent {
    std::vector<std::int64_t> message;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::deque<Sent> sent_;
};

}  // namespace pfc
