#include "support/test_paths.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace pfc::test {

namespace {
std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value ? value : fallback;
}
}  // namespace

std::string golden_path() {
  if (const char* path = std::getenv("PFC_GOLDEN")) return path;
  return (std::filesystem::path(source_dir()) / "tests/golden/iresnet_arcface_torch_f64.h5")
      .string();
}
std::string parity_golden_path() {
  return (std::filesystem::path(golden_path()).parent_path() / "arcface_torch_parity_f64.h5")
      .string();
}
std::string vit_golden_path() {
  return (std::filesystem::path(source_dir()) / "tests" / "golden" / "arcface_torch_vit_f64.h5")
      .string();
}
std::string source_dir() { return env_or("PFC_SOURCE_DIR", "."); }
std::string binary_dir() { return env_or("PFC_BINARY_DIR", "build"); }

std::string scratch_path(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(binary_dir()) / "test_scratch";
  // CTest runs the tests of one fixture in parallel processes; a folder per test keeps one
  // test's SetUp from emptying the folder another is reading.
  if (const auto* test = ::testing::UnitTest::GetInstance()->current_test_info())
    dir /= std::string(test->test_suite_name()) + "." + test->name();
  return (dir / name).string();
}

void write_text_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

std::string scratch_dir(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = scratch_path(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

}  // namespace pfc::test
