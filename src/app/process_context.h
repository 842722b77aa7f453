// What every pfc process does around its command: MPI start and finish, logging named by
// rank, and turning an error into a message and an exit code. An error on one rank of
// several aborts the whole job (MPI_Abort), so no peer waits forever in a collective.
#pragma once

#include <functional>
#include <string>

namespace pfc {

// The command line this process was started with, as one string (for run metadata).
const std::string& process_command_line();

// Started without a launcher, a pfc process is an MPI world of one (a singleton), and Open MPI
// would fork an `orted` to hold its runtime: where only the MPI library is installed (an
// installed tree carried to a GPU node, a container) MPI_Init then aborts. pfc never spawns
// processes, so it asks for an isolated singleton (OMPI_MCA_ess_singleton_isolated=1), which
// needs none, unless the variable is set already or a launcher started the process. An isolated
// singleton also gets a session folder of its own (OMPI_MCA_orte_tmpdir_base, unless set), so
// that several started at once on one host do not share one.
void prefer_isolated_singleton();

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
