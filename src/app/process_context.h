// What every pfc process does around its command: MPI start and finish, logging named by
// rank, and turning an error into a message and an exit code. An error on one rank of
// several aborts the whole job (MPI_Abort), so no peer waits forever in a collective.
#pragma once

#include <functional>
#include <string>

namespace pfc {

// The command line this process was started with, as one string (for run metadata).
const std::string& process_command_line();

class ProcessContext {
 public:
  ProcessContext(int& argc, char**& argv);
  ~ProcessContext();
  ProcessContext(const ProcessContext&) = delete;
  ProcessContext& operator=(const ProcessContext&) = delete;

  // Runs the command; returns its exit code, or reports an exception and returns (one rank)
  // or aborts the job (several ranks) with the error's exit code.
  int run(const std::function<int()>& command);
  int finish(int exit_code);

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

 private:
  int rank_ = 0;
  int world_size_ = 1;
  bool finalized_ = false;
};

}  // namespace pfc
