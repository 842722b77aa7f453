// Which CUDA libraries this process runs on, and the warning when one is older than the build
// (library_versions.h).
#include "backend/cuda/library_versions.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>
#include <nccl.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <mutex>

namespace pfc {

namespace {

// The file that defines `symbol` in this process, i.e. the library the dynamic loader chose.
// Asked of the loader rather than through &function, which may name a stub in the executable.
std::string file_defining(const char* symbol) {
  void* address = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info{};
  if (!address || dladdr(address, &info) == 0 || !info.dli_fname) return "";
  return info.dli_fname;
}

// A loaded object whose file name starts with `prefix`. For the driver: the runtime opens it
// itself, so its symbols are not in the global scope that dlsym searches.
std::string loaded_file_named(const char* prefix) {
  struct Search {
    const char* prefix;
    std::string found;
  } search{prefix, ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        const char* name = info->dlpi_name;
        if (!name || !*name) return 0;
        const char* slash = std::strrchr(name, '/');
        const char* base = slash ? slash + 1 : name;
        if (std::strncmp(base, s->prefix, std::strlen(s->prefix)) != 0) return 0;
        s->found = name;
        return 1;
      },
      &search);
  return search.found;
}

// CUDA's encoding (1000 * major + 10 * minor) and the libraries' (10000 * major + 100 * minor
// + patch); 0 is "none".
std::string cuda_text(int v) {
  return v == 0 ? "none" : fmt::format("{}.{}", v / 1000, v % 1000 / 10);
}
std::string library_text(int v) {
  return v == 0 ? "none" : fmt::format("{}.{}.{}", v / 10000, v % 10000 / 100, v % 100);
}

int cublas_runtime_version() {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
    return 0;
  return major * 10000 + minor * 100 + patch;
}

CudaLibraryVersion cuda_version(const char* name, int compiled, int runtime, std::string path) {
  return {name, compiled, runtime, cuda_text(compiled), cuda_text(runtime), std::move(path)};
}
CudaLibraryVersion library_version(const char* name, int compiled, int runtime,
                                   std::string path) {
  return {name, compiled, runtime, library_text(compiled), library_text(runtime),
          std::move(path)};
}

}  // namespace

std::vector<CudaLibraryVersion> cuda_library_versions() {
  int runtime = 0, driver = 0, nccl = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  // 0 without a driver; asking loads it, so its file is known after this call.
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  static_cast<void>(cudaGetLastError());  // a failure here must not be blamed on a later launch
  if (ncclGetVersion(&nccl) != ncclSuccess) nccl = 0;
  const int cudnn = static_cast<int>(cudnnGetVersion());
  return {
      cuda_version("CUDA runtime", CUDART_VERSION, runtime, file_defining("cudaRuntimeGetVersion")),
      cuda_version("CUDA driver", CUDART_VERSION, driver, loaded_file_named("libcuda.so")),
      library_version("cuBLAS", CUBLAS_VERSION, cublas_runtime_version(),
                      file_defining("cublasGetProperty")),
      library_version("cuDNN", CUDNN_VERSION, cudnn, file_defining("cudnnGetVersion")),
      library_version("NCCL", NCCL_VERSION_CODE, nccl, file_defining("ncclGetVersion")),
  };
}

std::string describe_library_version(const CudaLibraryVersion& v) {
  std::string text =
      fmt::format("{}: built with {}, running {}", v.name, v.compiled_text, v.runtime_text);
  if (!v.path.empty()) text += fmt::format(" ({})", v.path);
  if (v.runtime != 0 && v.older()) text += " - older than built with";
  return text;
}

std::vector<std::string> older_library_warnings(const std::vector<CudaLibraryVersion>& versions) {
  std::vector<std::string> warnings;
  for (const CudaLibraryVersion& v : versions) {
    if (v.runtime == 0 || !v.older()) continue;
    const std::string where = v.path.empty() ? "" : fmt::format(" ({})", v.path);
    if (v.name == "CUDA driver") {
      warnings.push_back(fmt::format(
          "the CUDA driver{} supports CUDA {}, older than the CUDA {} runtime pfc was built "
          "with: update the driver or use CUDA's forward-compatibility package",
          where, v.runtime_text, v.compiled_text));
    } else {
      warnings.push_back(fmt::format(
          "{} {} found at run time{} is older than the {} pfc was built with; NVIDIA supports "
          "a run-time {} only at least as new: put a newer one first on LD_LIBRARY_PATH (see "
          "`pfc info`)",
          v.name, v.runtime_text, where, v.compiled_text, v.name));
    }
  }
  return warnings;
}

void warn_about_older_cuda_libraries() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const std::string& w : older_library_warnings(cuda_library_versions()))
      spdlog::warn("{}", w);
  });
}

}  // namespace pfc
