// Where tests find the golden file, the source tree and the built executable (CTest passes
// them in the environment; see tests/CMakeLists.txt).
#pragma once

#include <string>

namespace pfc::test {

std::string golden_path();     // ../shared/golden/iresnet_arcface_torch.h5
std::string source_dir();
std::string binary_dir();
// A fresh, empty directory under the build tree for one test's files.
std::string scratch_dir(const std::string& test_name);

}  // namespace pfc::test
