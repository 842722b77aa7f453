// An address-space limit (ulimit -v, RLIMIT_AS) too small for pfc to start is refused before
// its libraries start, not met with a crash: CUDA's libraries segfault in their own start-up
// code, cuDNN aborts when it cannot load its parts, and OpenBLAS retries its buffer allocation
// forever, all before pfc could say a word. Run from the executable's preinit_array, which the
// loader calls after mapping every library and before any of them initialises.
#pragma once

namespace pfc {

// Addresses beyond the mapped libraries that the start-up and one rank's first step need: the
// libraries' own start-up (CUDA's, cuDNN's), MPI's and oneDNN's, plus per CPU thread OpenBLAS's
// buffer (128 MiB), a thread's stack and its malloc arena. Measured with the CUDA libraries
// mapped (0.95 GiB of addresses): pfc info starts from 1.3 GiB, the smoke training run from
// 1.6 GiB on 2 threads and 3.4 GiB on 16 (at 2.3 GiB OpenBLAS retries forever); below, start-up
// crashes or hangs.
inline constexpr double kStartHeadroomGiB = 0.5;
inline constexpr double kHeadroomPerThreadGiB = 0.125;

// Writes a message naming the limit and the need to stderr and ends the process with exit
// code 2 when RLIMIT_AS is below the addresses mapped now plus the headroom for the threads
// (OMP_NUM_THREADS or OPENBLAS_NUM_THREADS, the larger; unset: the online CPUs). Uses only calls
// that need no initialised library (getrlimit, read of /proc/self/statm, write, _exit).
// `environment`: the process's, as the loader passes it to preinit_array functions.
void refuse_too_small_address_space(char** environment);

}  // namespace pfc
