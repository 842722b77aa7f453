// Where tests find the golden file, the source tree and the built executable (CTest passes
// them in the environment; see tests/CMakeLists.txt).
#pragma once

#include <string>

namespace pfc::test {

std::string golden_path();     // tests/golden/iresnet_arcface_torch_f64.h5
// arcface_torch_parity_f64.h5, in the folder of golden_path() (MobileFaceNet, optimisers).
std::string parity_golden_path();
// arcface_torch_vit_f64.h5, kept in the source tree (tests/golden).
std::string vit_golden_path();
std::string source_dir();
std::string binary_dir();
// Where scratch_dir(name) lives for the running test: under the build tree, in a folder of
// the test's own, so that tests running side by side never share one.
std::string scratch_path(const std::string& name);
// scratch_path(name), emptied and created.
std::string scratch_dir(const std::string& name);
// Creates `path` (and the folders above it) holding `text`.
void write_text_file(const std::string& path, const std::string& text = "");

}  // namespace pfc::test
