// A file that a command writes whole (embeddings, a packed dataset): written under a temporary
// name beside its final one, NAME.tmp, and renamed over NAME only once complete, so that an
// error, a crash or Ctrl-C never leaves a torn NAME, and an earlier NAME is replaced only by a
// whole new one.
// - The temporary is locked (flock) while it is written: a second command writing the same NAME
//   at the same time is refused with a message naming it, instead of both writing one
//   temporary. A temporary that a killed command left (no lock) is taken over.
// - A signal that ends the process (SIGTERM, SIGINT, SIGHUP, SIGQUIT: core/stop_signals.h)
//   removes the temporaries first; one that arrives while a temporary is created, or while
//   temporaries are renamed into place, waits until that is done (in whichever thread it
//   arrives).
// - Destroyed without being committed (an error), it removes its temporary.
#pragma once

#include <filesystem>
#include <initializer_list>

#include "core/stop_signals.h"

namespace pfc {

class StagedFile {
 public:
  // Creates and locks final_path + ".tmp". Throws pfc::UsageError when another process holds
  // it, pfc::Error when it cannot be created.
  explicit StagedFile(std::filesystem::path final_path);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  // Where to write the contents (an empty file until then).
  const std::filesystem::path& temporary() const { return temporary_; }
  const std::filesystem::path& final_path() const { return final_; }

 private:
  friend void commit_staged_files(std::initializer_list<StagedFile*> files);
  std::filesystem::path final_;
  std::filesystem::path temporary_;
  int lock_fd_ = -1;
  RemovedOnSignal removed_on_signal_;
  bool committed_ = false;
};

// Renames each temporary over its final name (durably: synced, the folder synced), in the
// order given, with ending signals held back until the last is in place, so that files
// that belong together (a dataset's .rec and .idx) are replaced together. Throws pfc::Error
// naming the file that could not be renamed.
void commit_staged_files(std::initializer_list<StagedFile*> files);

}  // namespace pfc
