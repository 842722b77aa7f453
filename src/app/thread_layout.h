// How many CPU threads each rank computes on: the layout HPC users expect, ranks x threads,
// with one knob, OMP_NUM_THREADS (Slurm: --cpus-per-task; jobs/srun_step.sh sets it). Unset,
// a node's CPUs are shared evenly among its ranks. OpenBLAS runs on one thread: pfc cuts each
// GEMM over its OpenMP threads itself (backend/cpu/cpu_kernel_support.h), because OpenBLAS's own
// pthreads spin after each call beside the OpenMP threads that run everything else.
#pragma once

namespace pfc {

struct ThreadLayout {
  int threads = 1;         // per rank
  int ranks_on_node = 1;
  int node_cpus = 1;       // online CPUs of the node
  int rank_cpus = 1;       // CPUs this rank may run on (its affinity: mpiexec/srun binding)
  bool from_environment = false;
};

// More threads per CPU than this only wait for one (a node oversubscribed 8 times over is
// already far slower than one that is not); tens of thousands of threads end in a crash when
// their stacks no longer fit, so a count above the limit is a mistake, refused before any
// thread starts.
inline constexpr int kThreadsPerCpu = 8;

// The most threads per rank pfc accepts: kThreadsPerCpu x the node's online CPUs.
int thread_limit();

// Reads and checks OMP_NUM_THREADS and OPENBLAS_NUM_THREADS (not a positive integer, or more
// than thread_limit(): pfc::UsageError naming the variable, its value and the limit), sets
// the threads of OpenMP, keeps OpenBLAS on one, and warns once per node when ranks x threads
// exceed the node's CPUs or a rank has more threads than CPUs it may run on. Collective over
// MPI_COMM_WORLD.
ThreadLayout set_up_threads();
// The layout set_up_threads chose (the defaults before it ran).
const ThreadLayout& thread_layout();

}  // namespace pfc
