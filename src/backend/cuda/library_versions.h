// The CUDA libraries pfc was compiled against and those this process runs on: the CUDA
// runtime, the driver, cuBLAS, cuDNN and NCCL, each with the file it was loaded from.
// NVIDIA promises compatibility only with a run-time library at least as new as the headers
// an application was built with (cuDNN: built with 9.z, run with 9.y, y >= z), and a cluster's
// module or a system copy earlier on the library path is often older; pfc says so at start-up
// rather than failing later in a convolution. `pfc info` prints the list. A plain C++
// interface (no CUDA headers), implemented in CUDA builds only.
#pragma once

#include <string>
#include <vector>

namespace pfc {

struct CudaLibraryVersion {
  std::string name;  // "CUDA runtime", "CUDA driver", "cuBLAS", "cuDNN", "NCCL"
  // Version codes in the library's own encoding, comparable with each other: the headers'
  // (for the driver: the CUDA version the runtime needs it to support) and the loaded
  // library's (0: none loaded, e.g. no driver on a machine without a GPU).
  int compiled = 0;
  int runtime = 0;
  std::string compiled_text;  // "9.19.0"
  std::string runtime_text;   // "9.14.0", or "none"
  std::string path;           // the file the process loaded it from; "" when none or unknown

  bool older() const { return runtime < compiled; }
};

std::vector<CudaLibraryVersion> cuda_library_versions();

// "cuDNN: built with 9.19.0, running 9.14.0 (/usr/lib/x86_64-linux-gnu/libcudnn.so.9)", plus
// " - older than built with" when it is.
std::string describe_library_version(const CudaLibraryVersion& v);

// One warning for each library in `versions` found older than the one pfc was built with,
// naming both versions and the file, and what to do about it.
std::vector<std::string> older_library_warnings(const std::vector<CudaLibraryVersion>& versions);

// Logs older_library_warnings(cuda_library_versions()); only the first call in a process does.
void warn_about_older_cuda_libraries();

}  // namespace pfc
