// StagedFile: a file written as NAME.tmp replaces NAME only when committed; an error (no
// commit), SIGINT, SIGTERM, SIGHUP or SIGQUIT removes the temporary and leaves NAME as it was;
// a second writer of the same NAME is refused while the first holds it, a temporary a killed
// writer left is taken over. write_whole_file: a FIFO is written in place (and a FIFO nobody reads is an
// error, not a hang), a link keeps being a link to the file it names.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "core/error.h"
#include "core/stop_signals.h"
#include "io/durable_file.h"
#include "io/staged_file.h"
#include "support/test_paths.h"
#include "support/usage_error.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

TEST(StagedFile, ReplacesTheFileOnlyWhenCommitted) {
  const fs::path dir = test::scratch_dir("staged_commit");
  write_text(dir / "out.h5", "old");
  {
    StagedFile staged(dir / "out.h5");
    EXPECT_EQ(staged.temporary(), dir / "out.h5.tmp");
    write_text(staged.temporary(), "half");
  }  // an error: never committed
  EXPECT_EQ(read_text(dir / "out.h5"), "old");
  EXPECT_FALSE(fs::exists(dir / "out.h5.tmp"));
  {
    StagedFile rec(dir / "train.rec"), idx(dir / "train.idx");
    write_text(rec.temporary(), "records");
    write_text(idx.temporary(), "index");
    commit_staged_files({&rec, &idx});
  }
  EXPECT_EQ(read_text(dir / "train.rec"), "records");
  EXPECT_EQ(read_text(dir / "train.idx"), "index");
  EXPECT_FALSE(fs::exists(dir / "train.rec.tmp"));
  EXPECT_FALSE(fs::exists(dir / "train.idx.tmp"));
}

TEST(StagedFile, ASecondWriterIsRefusedAndALeftTemporaryTakenOver) {
  const fs::path dir = test::scratch_dir("staged_second");
  {
    StagedFile first(dir / "emb.h5");
    const std::string text = test::usage_error([&] { StagedFile second(dir / "emb.h5"); });
    EXPECT_NE(text.find("is being written by another process"), std::string::npos) << text;
    EXPECT_TRUE(fs::exists(first.temporary()));  // the refusal did not touch it
  }
  write_text(dir / "emb.h5.tmp", "left by a killed writer");
  StagedFile taken(dir / "emb.h5");
  EXPECT_EQ(fs::file_size(taken.temporary()), 0u);
}

// In a child process: a staged file, then `signal_number`; the parent sees the temporary gone,
// the earlier file kept, and the child ended by the signal.
void expect_interrupt_removes_temporary(int signal_number, const char* name) {
  const fs::path dir = test::scratch_dir(name);
  write_text(dir / "out.h5", "old");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    end_at_once_on_signals();  // whatever a test before this one in the process chose
    const struct rlimit no_core {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // SIGQUIT's default action writes a core file
    ::signal(signal_number, SIG_DFL);
    StagedFile staged(dir / "out.h5");
    write_text(staged.temporary(), "half");
    ::raise(signal_number);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal_number) << status;
  EXPECT_FALSE(fs::exists(dir / "out.h5.tmp"));
  EXPECT_EQ(read_text(dir / "out.h5"), "old");
}

TEST(StagedFile, InterruptsRemoveTheTemporary) {
  expect_interrupt_removes_temporary(SIGINT, "staged_sigint");
  expect_interrupt_removes_temporary(SIGTERM, "staged_sigterm");
  expect_interrupt_removes_temporary(SIGHUP, "staged_sighup");
  expect_interrupt_removes_temporary(SIGQUIT, "staged_sigquit");
}

TEST(WriteWholeFile, AFifoIsWrittenInPlace) {
  const fs::path dir = test::scratch_dir("whole_fifo");
  const fs::path fifo = dir / "outcome";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::string received;
  std::thread reader([&] { received = read_text(fifo); });
  write_whole_file(fifo, "done 4\n");
  reader.join();
  EXPECT_EQ(received, "done 4\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_FALSE(fs::exists(dir / "outcome.tmp"));
  // Nobody reading: an error after the wait, not a hang.
  EXPECT_THROW(write_whole_file(fifo, "done 4\n", 0.2), Error);
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST(WriteWholeFile, ALinkKeepsNamingTheFileItLeadsTo) {
  const fs::path dir = test::scratch_dir("whole_link");
  fs::create_directories(dir / "real");
  write_text(dir / "real" / "target.txt", "old");
  fs::create_symlink("real/target.txt", dir / "link");
  write_whole_file(dir / "link", "done 2\n");
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(read_text(dir / "real" / "target.txt"), "done 2\n");
  fs::create_symlink("real/new.txt", dir / "dangling");
  write_whole_file(dir / "dangling", "stopped 1\n");
  EXPECT_TRUE(fs::is_symlink(dir / "dangling"));
  EXPECT_EQ(read_text(dir / "real" / "new.txt"), "stopped 1\n");
  write_whole_file(dir / "plain.txt", "done 3\n");
  EXPECT_EQ(read_text(dir / "plain.txt"), "done 3\n");
}

}  // namespace
}  // namespace pfc
