// prefer_isolated_singleton: a process no launcher started asks Open MPI for an isolated
// singleton (no orted), a process a launcher started is left alone, and a value the user set
// stays; an isolated singleton has a session folder of its own.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "app/process_context.h"

namespace pfc {
namespace {

constexpr const char* kIsolated = "OMPI_MCA_ess_singleton_isolated";
constexpr const char* kSessionBase = "OMPI_MCA_orte_tmpdir_base";

// The variables of this test, as they were, back after it.
class IsolatedSingleton : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kNames) {
      const char* v = std::getenv(name);
      saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }
  static std::string value(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "(unset)";
  }

 private:
  static constexpr const char* kNames[] = {kIsolated, kSessionBase, "OMPI_COMM_WORLD_SIZE",
                                           "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST_F(IsolatedSingleton, IsAskedForWithoutALauncher) {
  prefer_isolated_singleton();
  EXPECT_EQ(value(kIsolated), "1");
}

// Every isolated singleton's job is named alike: each needs a session folder of its own.
TEST_F(IsolatedSingleton, HasASessionFolderOfItsOwn) {
  prefer_isolated_singleton();
  const std::string first = value(kSessionBase);
  EXPECT_TRUE(std::filesystem::is_directory(first)) << first;
  EXPECT_NE(first.find("pfc-mpi."), std::string::npos) << first;
  ::unsetenv(kSessionBase);
  prefer_isolated_singleton();
  EXPECT_NE(value(kSessionBase), first);
  std::filesystem::remove_all(first);
  std::filesystem::remove_all(value(kSessionBase));

  ::setenv(kSessionBase, "/somewhere", 1);
  prefer_isolated_singleton();
  EXPECT_EQ(value(kSessionBase), "/somewhere");
}

TEST_F(IsolatedSingleton, IsLeftAloneUnderALauncher) {
  for (const char* launcher : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    ::setenv(launcher, "2", 1);
    prefer_isolated_singleton();
    EXPECT_EQ(value(kIsolated), "(unset)") << launcher;
    EXPECT_EQ(value(kSessionBase), "(unset)") << launcher;
    ::unsetenv(launcher);
  }
}

TEST_F(IsolatedSingleton, KeepsTheUsersValue) {
  ::setenv(kIsolated, "0", 1);
  prefer_isolated_singleton();
  EXPECT_EQ(value(kIsolated), "0");
  EXPECT_EQ(value(kSessionBase), "(unset)");
}

}  // namespace
}  // namespace pfc
