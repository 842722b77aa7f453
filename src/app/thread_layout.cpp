#include "app/thread_layout.h"

#include <cblas.h>
#include <omp.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>

#include "app/rank_place.h"
#include "core/error.h"

namespace pfc {

namespace {

// The online CPUs of this node.
int node_cpus() { return std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))); }

// A thread count the environment gives (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS) as one positive
// integer no larger than thread_limit(); 0 when it is unset.
int threads_from_environment(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return 0;
  const std::string_view value(text);
  int threads = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), threads);
  if (value.empty() || end != value.data() + value.size() ||
      (error != std::errc() && error != std::errc::result_out_of_range) ||
      (error == std::errc() && threads < 1))
    throw UsageError(fmt::format("{}='{}' is not a positive integer (the CPU threads of each "
                                 "rank; unset it to share the node's CPUs among its ranks)",
                                 name, value));
  if (error == std::errc::result_out_of_range || threads > thread_limit())
    throw UsageError(fmt::format("{}={} is more threads than this node can run: at most {} "
                                 "({} per CPU, {} CPUs); more only wait for a CPU, and tens of "
                                 "thousands exhaust the memory for their stacks (set it to the "
                                 "CPUs each rank should use)",
                                 name, value, thread_limit(), kThreadsPerCpu, node_cpus()));
  return threads;
}

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

int local_rank() {
  const char* names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"};
  for (const char* name : names)
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return 0;
}

ThreadLayout& layout_storage() {
  static ThreadLayout layout;
  return layout;
}

}  // namespace

const ThreadLayout& thread_layout() { return layout_storage(); }

int thread_limit() { return kThreadsPerCpu * node_cpus(); }

ThreadLayout set_up_threads() {
  ThreadLayout& layout = layout_storage();
  const int asked = threads_from_environment("OMP_NUM_THREADS");
  // OpenBLAS read it when it was loaded; checked all the same, as it sizes its own pool.
  threads_from_environment("OPENBLAS_NUM_THREADS");
  openblas_set_num_threads(1);
  layout.ranks_on_node = ranks_on_this_node();
  layout.node_cpus = node_cpus();
  layout.rank_cpus = affinity_cpus();
  layout.from_environment = asked > 0;
  layout.threads = asked > 0 ? asked
                             : std::max(1, std::min(layout.rank_cpus,
                                                    layout.node_cpus / layout.ranks_on_node));
  omp_set_num_threads(layout.threads);

  if (local_rank() == 0 && layout.ranks_on_node * layout.threads > layout.node_cpus)
    spdlog::warn("{} rank(s) x {} thread(s) on this node's {} CPU(s): oversubscribed, every "
                 "rank runs slower than it would alone (set OMP_NUM_THREADS, or Slurm's "
                 "--cpus-per-task, so that ranks x threads <= CPUs)",
                 layout.ranks_on_node, layout.threads, layout.node_cpus);
  else if (local_rank() == 0 && layout.threads > layout.rank_cpus)
    spdlog::warn("{} thread(s) per rank, but a rank may run on {} CPU(s) only (its binding): "
                 "start the ranks with mpiexec --bind-to none, or srun --cpus-per-task={}",
                 layout.threads, layout.rank_cpus, layout.threads);
  return layout;
}

}  // namespace pfc
