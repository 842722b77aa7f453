#include "app/process_context.h"

#include <mpi.h>
#include <sys/resource.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <system_error>

#include "core/error.h"
#include "core/stop_signals.h"

namespace pfc {

namespace {
std::string& command_line_storage() {
  static std::string text;
  return text;
}
}  // namespace

const std::string& process_command_line() { return command_line_storage(); }

namespace {

// The session folder this process made for Open MPI, removed when the process exits (after
// MPI_Finalize, which empties it), and by a signal that ends it (core/stop_signals.h). Only a
// process killed by SIGKILL leaves it behind, as Open MPI's own session folders are left.
std::string& private_session_base() {
  static std::string path;
  return path;
}

RemovedOnSignal& session_base_removed_on_signal() {
  static RemovedOnSignal removal;
  return removal;
}

void remove_private_session_base() {
  std::error_code ignored;
  std::filesystem::remove_all(private_session_base(), ignored);
}

// Every isolated singleton of a host takes the same job name, so their session folders
// (<base>/ompi.<host>.<uid>/jf.0/1/0) would be one: two starting together fail in MPI_Init
// ("File exists"), and the first to finish removes the other's. Each gets its own base.
void use_private_session_base() {
  if (std::getenv("OMPI_MCA_orte_tmpdir_base") != nullptr) return;
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/pfc-mpi.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return;  // Open MPI's default then, as before
  private_session_base() = pattern;
  session_base_removed_on_signal() = RemovedOnSignal(pattern, RemovedOnSignal::Kind::tree);
  ::setenv("OMPI_MCA_orte_tmpdir_base", pattern.c_str(), 1);
  std::atexit(remove_private_session_base);
}

// Where the memory went: a limit on addresses (ulimit -v) is the usual reason on a host.
std::string address_space_note() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return "";
  return fmt::format(" under an address-space limit (ulimit -v) of {:.2f} GiB",
                     static_cast<double>(limit.rlim_cur) / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace

void prefer_isolated_singleton() {
  // A launcher (mpiexec, srun, a PMI/PMIx server) announces itself in the environment.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name) != nullptr) return;
  // 0: a value the user set stays.
  ::setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
  if (std::string(std::getenv("OMPI_MCA_ess_singleton_isolated")) == "1")
    use_private_session_base();
}

ProcessContext::ProcessContext(int& argc, char**& argv) {
  std::string& command_line = command_line_storage();
  for (int i = 0; i < argc; ++i) {
    if (i > 0) command_line += ' ';
    command_line += argv[i];
  }
  prefer_isolated_singleton();
  // Before MPI_Init, which can wait (for a launcher that is gone), and again after it, in case
  // it installed handlers of its own: a signal removes the session folder and ends the process.
  install_stop_signal_handlers();
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  install_stop_signal_handlers();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
  // Errors come back as codes so that they can be reported with the call that failed.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  auto logger = spdlog::stderr_color_mt("pfc");
  logger->set_pattern(world_size_ > 1 ? fmt::format("[%H:%M:%S rank {}] %^%l%$: %v", rank_)
                                      : "[%H:%M:%S] %^%l%$: %v");
  spdlog::set_default_logger(logger);
}

ProcessContext::~ProcessContext() { finish(kExitOk); }

int ProcessContext::finish(int exit_code) {
  if (!finalized_) {
    finalized_ = true;
    int already = 0;
    MPI_Finalized(&already);
    if (!already) MPI_Finalize();
  }
  return exit_code;
}

int ProcessContext::run(const std::function<int()>& command) {
  int code = kExitFailure;
  try {
    return finish(command());
  } catch (const OutOfMemoryError& e) {
    spdlog::error("{}{}", e.what(), address_space_note());
    code = e.exit_code();
  } catch (const Error& e) {
    spdlog::error("{}", e.what());
    code = e.exit_code();
  } catch (const std::bad_alloc& e) {
    // A library's allocation (the standard library's, HDF5's), not one of pfc's own, which
    // name their need (pfc::OutOfMemoryError).
    spdlog::error("out of memory: an allocation failed ({}){}", e.what(), address_space_note());
  } catch (const std::exception& e) {
    spdlog::error("unexpected failure: {}", e.what());
  }
  spdlog::default_logger()->flush();
  std::fflush(stdout);
  if (world_size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
  return finish(code);
}

}  // namespace pfc
