#include "comm/collective_watchdog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "comm/mpi_check.h"

namespace pfc {

namespace {

// Every message starts with the watchdog's instance number: a freed communicator's context id
// is reused by later ones, and a message still in flight on the old one must not be taken for
// the new one's.
enum Tag : int {
  kQuestion = 1,  // [instance, asker's collective number]
  kAnswer = 2,    // [instance, the asker's number, the collective the answering rank waits in]
  kVerdict = 3,   // [instance, collective number, missing count, missing..., live ranks...]
};

// Watchdogs are created collectively (with their communicators), so every rank numbers them
// alike.
std::int64_t next_instance() {
  static std::atomic<std::int64_t> created{0};
  return ++created;
}

// Checking the clock and the side channel costs more than a test of the request: once in a
// while is enough.
constexpr long kSpinsPerCheck = 64;
// Spinning at first, as blocking MPI does; then yielding, so that ranks sharing cores (an
// oversubscribed node) make progress; after a second, short sleeps.
constexpr long kSpinsBeforeYield = 1000;

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

void pause(long spins, double waited_s) {
  if (spins < kSpinsBeforeYield) return;
  if (waited_s < 1.0) {
    sched_yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::microseconds(100));
}

}  // namespace

CollectiveWatchdog::CollectiveWatchdog(MPI_Comm comm, double timeout_s)
    : instance_(next_instance()), timeout_s_(timeout_s) {
  PFC_CHECK(std::isfinite(timeout_s) && timeout_s >= 0,
            "collective timeout {} s must be a finite number >= 0", timeout_s);
  PFC_CHECK_MPI(MPI_Comm_dup(comm, &side_));
  PFC_CHECK_MPI(MPI_Comm_set_errhandler(side_, MPI_ERRORS_RETURN));
  PFC_CHECK_MPI(MPI_Comm_rank(side_, &rank_));
  PFC_CHECK_MPI(MPI_Comm_size(side_, &world_));
  answers_.resize(static_cast<std::size_t>(world_));
  peer_concluded_.resize(static_cast<std::size_t>(world_));
}

// The side channel is never freed: a question sent after a timeout may still be on its way to
// a rank whose collective completed meanwhile, and Open MPI gives a freed communicator's id to
// the next one created, whose traffic the stale message would then disturb. For the same
// reason the answers still being sent keep their buffers.
CollectiveWatchdog::~CollectiveWatchdog() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  forget_sent();
  if (sent_.empty()) return;
  for (Sent& s : sent_) MPI_Request_free(&s.request);
  new std::deque<Sent>(std::move(sent_));
}

void CollectiveWatchdog::wait(MPI_Request& request, const char* what) {
  ++sequence_;
  if (timeout_s_ <= 0 || world_ == 1) {
    PFC_CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    return;
  }
  const Clock::duration timeout =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
  const Clock::time_point started = Clock::now();
  Clock::time_point deadline = started + timeout;
  double waited = 0;
  for (long spins = 0;; ++spins) {
    int done = 0;
    PFC_CHECK_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    if (spins % kSpinsPerCheck == 0) {
      const Clock::time_point now = Clock::now();
      waited = seconds(now - started);
      if (serve_side_channel()) conclude(what, waited);
      if (now >= deadline) {
        if (investigate(request, what, started)) return;
        deadline = Clock::now() + timeout;
      }
    }
    pause(spins, waited);
  }
}

bool CollectiveWatchdog::serve_side_channel() {
  while (true) {
    int arrived = 0;
    MPI_Status status;
    PFC_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, side_, &arrived, &status));
    if (!arrived) break;
    int count = 0;
    PFC_CHECK_MPI(MPI_Get_count(&status, MPI_INT64_T, &count));
    std::vector<std::int64_t> message(static_cast<std::size_t>(std::max(count, 0)));
    PFC_CHECK_MPI(MPI_Recv(message.data(), count, MPI_INT64_T, status.MPI_SOURCE,
                           status.MPI_TAG, side_, MPI_STATUS_IGNORE));
    const int peer = status.MPI_SOURCE;
    if (message.empty() || message[0] != instance_) continue;  // another communicator's
    if (status.MPI_TAG == kQuestion && count == 2) {
      send(peer, kAnswer, {message[1], sequence_});
    } else if (status.MPI_TAG == kAnswer && count == 3) {
      // An answer to an earlier question (a collective that then completed) is stale.
      if (message[1] == sequence_) answers_[static_cast<std::size_t>(peer)] = message[2];
    } else if (status.MPI_TAG == kVerdict && count >= 3 && message[2] <= count - 3) {
      peer_concluded_[static_cast<std::size_t>(peer)] = true;
      if (!verdict_) {
        const auto missing = static_cast<std::size_t>(message[2]);
        Verdict taken;
        taken.missing.assign(message.begin() + 3, message.begin() + 3 + missing);
        taken.live.assign(message.begin() + 3 + missing, message.end());
        taken.from = peer;
        verdict_ = std::move(taken);
      }
    }
  }
  forget_sent();
  return verdict_.has_value();
}

bool CollectiveWatchdog::investigate(MPI_Request& request, const char* what,
                                     Clock::time_point started) {
  const double grace = std::clamp(timeout_s_ / 4, 1.0, 60.0);
  std::fill(answers_.begin(), answers_.end(), std::nullopt);
  answers_[static_cast<std::size_t>(rank_)] = sequence_;
  for (int peer = 0; peer < world_; ++peer)
    if (peer != rank_) send(peer, kQuestion, {sequence_});
  const Clock::time_point asked = Clock::now();
  for (long spins = 0;; ++spins) {
    int done = 0;
    PFC_CHECK_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) {
      spdlog::warn("collective #{} ({}) completed after {:.1f} s, longer than "
                   "collective_timeout_s = {} s",
                   sequence_, what, seconds(Clock::now() - started), timeout_s_);
      return true;
    }
    if (serve_side_channel()) conclude(what, seconds(Clock::now() - started));
    const bool all_answered =
        std::all_of(answers_.begin(), answers_.end(), [](const auto& a) { return a.has_value(); });
    const bool all_here = std::all_of(answers_.begin(), answers_.end(),
                                      [&](const auto& a) { return a && *a == sequence_; });
    if (all_here) {
      // Every rank is in it: data in flight, not a missing rank. Wait on.
      spdlog::warn("collective #{} ({}) has taken {:.1f} s, longer than collective_timeout_s = "
                   "{} s, but every rank is in it; waiting on",
                   sequence_, what, seconds(Clock::now() - started), timeout_s_);
      return false;
    }
    if (all_answered || seconds(Clock::now() - asked) >= grace) break;
    pause(spins, grace);
  }
  Verdict own;
  for (int peer = 0; peer < world_; ++peer)
    (answers_[static_cast<std::size_t>(peer)] ? own.live : own.missing).push_back(peer);
  verdict_ = std::move(own);
  conclude(what, seconds(Clock::now() - started));
}

void CollectiveWatchdog::conclude(const char* what, double waited_s) {
  const Verdict& verdict = *verdict_;
  std::vector<std::int64_t> message{sequence_, static_cast<std::int64_t>(verdict.missing.size())};
  message.insert(message.end(), verdict.missing.begin(), verdict.missing.end());
  message.insert(message.end(), verdict.live.begin(), verdict.live.end());
  for (const std::int64_t peer : verdict.live)
    if (peer != rank_) send(static_cast<int>(peer), kVerdict, message);
  // Every live rank reaches the verdict before this one ends the job (and with it the others).
  const double grace = std::clamp(timeout_s_ / 4, 1.0, 60.0);
  const Clock::time_point start = Clock::now();
  const auto everyone_concluded = [&] {
    return std::all_of(verdict.live.begin(), verdict.live.end(), [&](std::int64_t peer) {
      return peer == rank_ || peer_concluded_[static_cast<std::size_t>(peer)];
    });
  };
  for (long spins = 0; !everyone_concluded() && seconds(Clock::now() - start) < grace; ++spins) {
    serve_side_channel();
    pause(spins, grace);
  }

  std::vector<std::string> elsewhere;
  for (int peer = 0; peer < world_; ++peer) {
    const auto& answer = answers_[static_cast<std::size_t>(peer)];
    if (answer && *answer != sequence_)
      elsewhere.push_back(fmt::format("rank {} waits in collective #{}", peer, *answer));
  }
  const std::string missing =
      verdict.missing.empty()
          ? std::string("every rank answered, but not from the same collective")
          : fmt::format("rank{} {} did not arrive (no answer: stopped, hung, or busy outside "
                        "any collective)",
                        verdict.missing.size() == 1 ? "" : "s", fmt::join(verdict.missing, ", "));
  const std::string waiting =
      verdict.live.size() == 1
          ? fmt::format("rank {} was waiting", verdict.live.front())
          : fmt::format("ranks {} were waiting", fmt::join(verdict.live, ", "));
  throw CollectiveTimeout(fmt::format(
      "collective #{} ({}) on rank {} has not completed after {:.1f} s "
      "(collective_timeout_s = {} s): {}{}{}; {}. Every live rank stops",
      sequence_, what, rank_, waited_s, timeout_s_, missing,
      elsewhere.empty() ? "" : fmt::format(" ({})", fmt::join(elsewhere, "; ")),
      verdict.from >= 0 ? fmt::format(" (found by rank {})", verdict.from) : "", waiting));
}

void CollectiveWatchdog::send(int peer, int tag, std::vector<std::int64_t> message) {
  Sent& sent = sent_.emplace_back();
  sent.message = std::move(message);
  sent.message.insert(sent.message.begin(), instance_);
  PFC_CHECK_MPI(MPI_Isend(sent.message.data(), static_cast<int>(sent.message.size()),
                          MPI_INT64_T, peer, tag, side_, &sent.request));
}

void CollectiveWatchdog::forget_sent() {
  while (!sent_.empty()) {
    int done = 0;
    MPI_Test(&sent_.front().request, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    sent_.pop_front();
  }
}

}  // namespace pfc
