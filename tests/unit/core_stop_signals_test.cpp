// Ending signals (core/stop_signals.h): SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGUSR1 remove the
// registered files and folders and end the process by the signal; at safe points the first
// only asks for a stop (as does the same request delivered twice), and a second one, or the
// grace period passing while the process is blocked in a read, ends it. Each case runs in a child process, which the parent watches.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "core/stop_signals.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& path) { std::ofstream(path) << "x"; }

// The wait status of a child that runs `body` (and then exits 0); a child still alive after a
// generous bound is killed and reported as such, so a regression fails instead of hanging.
int run_child(const std::function<void()>& body) {
  const pid_t child = ::fork();
  if (child == 0) {
    const struct rlimit no_core {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // SIGQUIT's default action writes a core file
    end_at_once_on_signals();  // whatever a test before this one in the process chose
    clear_stop_request();
    body();
    ::_exit(0);
  }
  EXPECT_GT(child, 0);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      ADD_FAILURE() << "the child did not end";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status;
}

bool ended_by(int status, int signal_number) {
  return WIFSIGNALED(status) && WTERMSIG(status) == signal_number;
}

// A folder a few levels deep, with a link to a file outside it that must survive its removal.
struct Tree {
  fs::path root, outside;
};

Tree make_tree(const fs::path& dir) {
  Tree tree{dir / "session", dir / "outside.txt"};
  fs::create_directories(tree.root / "ompi.host.1000" / "jf.0" / "1" / "0");
  touch(tree.root / "ompi.host.1000" / "jf.0" / "1" / "0" / "shared_mem");
  touch(tree.root / "ompi.host.1000" / "contact.txt");
  touch(tree.outside);
  fs::create_symlink(tree.outside, tree.root / "ompi.host.1000" / "link");
  return tree;
}

TEST(StopSignals, EachEndingSignalRemovesWhatIsRegisteredAndEndsTheProcess) {
  for (const int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1}) {
    SCOPED_TRACE(strsignal(signal_number));
    const fs::path dir = test::scratch_dir(fmt::format("stop_signal_{}", signal_number));
    const fs::path file = dir / "out.h5.tmp";
    touch(file);
    const Tree tree = make_tree(dir);
    const int status = run_child([&] {
      ::signal(signal_number, SIG_DFL);
      install_stop_signal_handlers();
      const RemovedOnSignal removed_file(file, RemovedOnSignal::Kind::file);
      const RemovedOnSignal removed_tree(tree.root, RemovedOnSignal::Kind::tree);
      ::raise(signal_number);
    });
    EXPECT_TRUE(ended_by(status, signal_number)) << status;
    EXPECT_FALSE(fs::exists(file));
    EXPECT_FALSE(fs::exists(tree.root));
    EXPECT_TRUE(fs::exists(tree.outside));
  }
}

TEST(StopSignals, AForgottenPathStays) {
  const fs::path dir = test::scratch_dir("stop_signal_forgotten");
  touch(dir / "kept.h5");
  const int status = run_child([&] {
    install_stop_signal_handlers();
    RemovedOnSignal removed(dir / "kept.h5", RemovedOnSignal::Kind::file);
    removed.forget();
    ::raise(SIGTERM);
  });
  EXPECT_TRUE(ended_by(status, SIGTERM)) << status;
  EXPECT_TRUE(fs::exists(dir / "kept.h5"));
}

TEST(StopSignals, AnIgnoredSignalStaysIgnored) {
  const int status = run_child([] {
    ::signal(SIGHUP, SIG_IGN);  // nohup
    install_stop_signal_handlers();
    ::raise(SIGHUP);
    ::_exit(7);
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;
}

TEST(StopSignals, AtSafePointsTheFirstSignalAsksAndTheSecondEnds) {
  const fs::path dir = test::scratch_dir("stop_signal_second");
  const fs::path file = dir / "ijb.h5.tmp";
  touch(file);
  const int status = run_child([&] {
    stop_at_safe_points(600);
    const RemovedOnSignal removed(file, RemovedOnSignal::Kind::file);
    // SIGUSR1, Slurm's warning, only ever asks.
    ::raise(SIGUSR1);
    ::raise(SIGUSR1);
    if (!stop_requested()) ::_exit(10);
    ::raise(SIGTERM);
    // At once after it: the same request delivered twice (a scheduler's and a launcher's).
    ::raise(SIGHUP);
    if (!fs::exists(file)) ::_exit(11);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    ::raise(SIGINT);
    ::_exit(12);
  });
  EXPECT_TRUE(ended_by(status, SIGINT)) << status;
  EXPECT_FALSE(fs::exists(file));
}

TEST(StopSignals, AProcessBlockedInAReadEndsOnceTheGracePeriodHasPassed) {
  const fs::path dir = test::scratch_dir("stop_signal_blocked");
  const fs::path file = dir / "emb.h5.tmp";
  touch(file);
  const int status = run_child([&] {
    stop_at_safe_points(1);
    const RemovedOnSignal removed(file, RemovedOnSignal::Kind::file);
    int fds[2];
    if (::pipe(fds) != 0) ::_exit(10);
    ::raise(SIGTERM);
    char byte = 0;
    // Nobody writes, and the write end stays open: without the grace period, forever.
    [[maybe_unused]] const ssize_t n = ::read(fds[0], &byte, 1);
    ::_exit(11);
  });
  EXPECT_TRUE(ended_by(status, SIGTERM)) << status;
  EXPECT_FALSE(fs::exists(file));
}

TEST(StopSignals, ClearingTheRequestDisarmsTheGracePeriod) {
  const int status = run_child([] {
    stop_at_safe_points(1);
    ::raise(SIGTERM);
    clear_stop_request();
    if (stop_requested()) ::_exit(10);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ::_exit(7);
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;
}

TEST(StopSignals, EndingWaitsForSignalsDeferred) {
  const fs::path dir = test::scratch_dir("stop_signal_deferred");
  const fs::path file = dir / "train.rec.tmp";
  touch(file);
  const int status = run_child([&] {
    install_stop_signal_handlers();
    const RemovedOnSignal removed(file, RemovedOnSignal::Kind::file);
    {
      const SignalsDeferred deferred;
      ::raise(SIGTERM);
      touch(dir / "still_running");
    }
    ::_exit(10);
  });
  EXPECT_TRUE(ended_by(status, SIGTERM)) << status;
  EXPECT_TRUE(fs::exists(dir / "still_running"));
  EXPECT_FALSE(fs::exists(file));
}

}  // namespace
}  // namespace pfc
