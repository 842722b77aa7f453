// `pfc info`: what this build and machine offer — version, backends, visible GPUs, the
// versions of the libraries it runs on (for the CUDA ones, also those it was built with, and
// the file each was loaded from), what runs the CPU backend's convolutions (oneDNN, its
// version and instruction set, or the reference loops) and on how many threads.
#include <H5public.h>
#include <cblas.h>
#include <fmt/core.h>
#include <mpi.h>

#include "app/commands.h"
#include "app/thread_layout.h"
#include "backend/backend.h"
#include "backend/cpu/cpu_runtime.h"
#include "core/build_revision.h"

#ifdef PFC_HAVE_CUDA
#include "backend/cuda/library_versions.h"
#endif

namespace pfc {

namespace {

int run_info() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return kExitOk;
  fmt::print("pfc {} ({})\n", PFC_VERSION, git_revision());
  fmt::print("backends: cpu{}\n", cuda_compiled() ? ", cuda" : " (CPU-only build: no CUDA)");
  if (cuda_compiled()) fmt::print("visible GPUs: {}\n", cuda_device_count());
#ifdef PFC_HAVE_CUDA
  for (const CudaLibraryVersion& v : cuda_library_versions())
    fmt::print("{}\n", describe_library_version(v));
#endif
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(mpi_version, &length);
  std::string mpi(mpi_version, static_cast<std::size_t>(length));
  mpi = mpi.substr(0, mpi.find_first_of(",\n"));
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  fmt::print("MPI: {}\nHDF5: {}.{}.{}\nBLAS: {}\n", mpi, major, minor, release,
             openblas_get_config());
  const ThreadLayout& threads = thread_layout();
  fmt::print("CPU backend: {}\n", cpu::onednn_description());
  fmt::print("CPU batch-norm and PReLU: vectorised passes ({})\n", cpu::channel_passes_isa());
  fmt::print("CPU threads: {} per rank ({}; {} rank(s) on this node of {} CPUs)\n",
             cpu::cpu_threads(),
             threads.from_environment ? "OMP_NUM_THREADS" : "OMP_NUM_THREADS unset: the node's CPUs shared among its ranks",
             threads.ranks_on_node, threads.node_cpus);
  return kExitOk;
}

}  // namespace

CommandRunner add_info_command(CLI::App& app) {
  app.add_subcommand("info", "Show the build, its backends and the visible GPUs")
      ->footer(
          "Run without mpiexec or srun, a pfc command is an MPI world of one rank (a "
          "singleton); pfc then sets OMPI_MCA_ess_singleton_isolated=1 (unless it is set) so "
          "that Open MPI needs no orted, as on a machine that has only the MPI library.");
  return [] { return run_info(); };
}

}  // namespace pfc
