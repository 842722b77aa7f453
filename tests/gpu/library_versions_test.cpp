// The CUDA libraries pfc was built with and those it runs on (backend/cuda/library_versions.h):
// every library is listed with the headers' version and the loaded file's, and an older one
// is named in a warning with both versions and its file. No GPU needed: the libraries answer
// without one (the driver reports none).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "backend/backend.h"

#ifdef PFC_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <fmt/format.h>
#include <nccl.h>

#include "backend/cuda/library_versions.h"
#endif

namespace pfc {
namespace {

#ifdef PFC_HAVE_CUDA

TEST(CudaLibraryVersions, ListsEveryLibraryWithTheFileItCameFrom) {
  const std::vector<CudaLibraryVersion> v = cuda_library_versions();
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].name, "CUDA runtime");
  EXPECT_EQ(v[0].compiled, CUDART_VERSION);
  EXPECT_EQ(v[1].name, "CUDA driver");
  EXPECT_EQ(v[2].name, "cuBLAS");
  EXPECT_EQ(v[2].compiled, CUBLAS_VERSION);
  EXPECT_EQ(v[3].name, "cuDNN");
  EXPECT_EQ(v[3].compiled, CUDNN_VERSION);
  EXPECT_EQ(v[3].compiled_text, fmt::format("{}.{}.{}", CUDNN_MAJOR, CUDNN_MINOR,
                                            CUDNN_PATCHLEVEL));
  EXPECT_EQ(v[4].name, "NCCL");
  EXPECT_EQ(v[4].compiled_text, fmt::format("{}.{}.{}", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH));
  // The runtime libraries are linked, so each is loaded from a file that exists.
  for (const std::size_t i : {0u, 2u, 3u, 4u}) {
    EXPECT_GT(v[i].runtime, 0) << v[i].name;
    EXPECT_NE(v[i].runtime_text, "none") << v[i].name;
    EXPECT_TRUE(std::filesystem::exists(v[i].path)) << v[i].name << ": '" << v[i].path << "'";
  }
  EXPECT_NE(v[3].path.find("libcudnn"), std::string::npos) << v[3].path;
  EXPECT_NE(v[4].path.find("libnccl"), std::string::npos) << v[4].path;
  if (cuda_device_count() > 0) {
    EXPECT_GT(v[1].runtime, 0);
    EXPECT_NE(v[1].path.find("libcuda.so"), std::string::npos) << v[1].path;
  }
}

TEST(CudaLibraryVersions, AnOlderLibraryIsNamedWithBothVersionsAndItsFile) {
  const CudaLibraryVersion older{"cuDNN", 91900, 91400, "9.19.0", "9.14.0",
                                 "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"};
  const CudaLibraryVersion newer{"NCCL", 22809, 22901, "2.28.9", "2.29.1", "/x/libnccl.so.2"};
  const CudaLibraryVersion no_driver{"CUDA driver", 13000, 0, "13.0", "none", ""};
  const CudaLibraryVersion old_driver{"CUDA driver", 13000, 12080, "13.0", "12.8",
                                      "/usr/lib/libcuda.so.1"};
  EXPECT_TRUE(older.older());
  EXPECT_FALSE(newer.older());
  EXPECT_EQ(describe_library_version(older),
            "cuDNN: built with 9.19.0, running 9.14.0 (/usr/lib/x86_64-linux-gnu/libcudnn.so.9) "
            "- older than built with");
  EXPECT_EQ(describe_library_version(newer),
            "NCCL: built with 2.28.9, running 2.29.1 (/x/libnccl.so.2)");
  EXPECT_EQ(describe_library_version(no_driver), "CUDA driver: built with 13.0, running none");

  const std::vector<std::string> warnings =
      older_library_warnings({older, newer, no_driver, old_driver});
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("cuDNN 9.14.0 found at run time "
                             "(/usr/lib/x86_64-linux-gnu/libcudnn.so.9) is older than the "
                             "9.19.0 pfc was built with"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("LD_LIBRARY_PATH"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("supports CUDA 12.8, older than the CUDA 13.0 runtime"),
            std::string::npos)
      << warnings[1];
}

#else

TEST(CudaLibraryVersions, NeedsCuda) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace pfc
