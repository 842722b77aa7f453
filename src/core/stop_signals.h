// How a pfc process ends on a signal, below every layer that asks whether to stop (DESIGN.md).
//
// The signals that end a process: SIGTERM (kill, a scheduler), SIGINT (Ctrl-C), SIGHUP (the
// terminal went away), SIGQUIT (Ctrl-\), and SIGUSR1 (Slurm's warning before the time limit).
// - By default a process ends at once: the files and folders registered with RemovedOnSignal
//   (a staged output's temporary, the MPI session folder) are removed, then the signal ends the
//   process as it would have without a handler (the parent sees the signal; a shell shows
//   128 + its number).
// - A command that stops at safe points of its own (train at a step boundary, ijb between
//   batches) calls stop_at_safe_points(): the first ending signal then only asks for a stop
//   (stop_requested()), and SIGUSR1 never does more. A second ending signal (half a second or
//   more after the first: one sooner is the same request delivered twice, by a scheduler and
//   a launcher) ends the process at once as above, and so does the grace period passing after
//   the first, so that a process blocked in a read or a write (a FIFO, a pipe nobody drains)
//   still ends.
// - While a SignalsDeferred lives, ending waits until it is gone (files changing hands).
// Everything the handler does is async-signal-safe: the paths live in fixed slots, removal
// uses unlinkat/openat/getdents64, and the end is raise() with the default action.
#pragma once

#include <filesystem>

namespace pfc {

// Installs the handlers of the ending signals, where the signal is not ignored (nohup keeps
// SIGHUP ignored) and not handled by them already. Idempotent; cheap to call again (another
// handler that replaced them is replaced in turn).
void install_stop_signal_handlers();

// From now on the first ending signal asks for a stop; a second one, or `grace_seconds`
// passing after the first (SIGALRM), ends the process at once. Installs the handlers.
void stop_at_safe_points(int grace_seconds);
// Back to ending at once on the first signal (the default).
void end_at_once_on_signals();

// Whether this process was asked to stop (by a signal or request_stop()).
bool stop_requested();
void request_stop();
// Forgets a request and the signal that made it, and disarms the grace period (a new run in
// the same process starts clean).
void clear_stop_request();

// A path that an ending signal removes (a file, or a folder with everything under it), for as
// long as this object holds it. Registering never fails: a path that finds no free slot (or is
// too long for one) is only removed by its owner's own error handling.
class RemovedOnSignal {
 public:
  enum class Kind { file, tree };
  RemovedOnSignal() = default;
  RemovedOnSignal(const std::filesystem::path& path, Kind kind);
  ~RemovedOnSignal() { forget(); }
  RemovedOnSignal(RemovedOnSignal&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
  RemovedOnSignal& operator=(RemovedOnSignal&& other) noexcept;
  RemovedOnSignal(const RemovedOnSignal&) = delete;
  RemovedOnSignal& operator=(const RemovedOnSignal&) = delete;

  // The path is no longer removed by a signal (it was renamed into place, or is not ours).
  void forget();

 private:
  int slot_ = -1;
};

// While one lives, ending by a signal waits (in whichever thread the signal arrives); one that
// arrived meanwhile ends the process when the last SignalsDeferred is gone. For moments in which
// an end would leave a temporary behind, remove another process's, or rename half of a set.
class SignalsDeferred {
 public:
  SignalsDeferred();
  ~SignalsDeferred();
  SignalsDeferred(const SignalsDeferred&) = delete;
  SignalsDeferred& operator=(const SignalsDeferred&) = delete;
};

}  // namespace pfc
