#include "support/usage_error.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace pfc::test {

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    return e.what();
  }
  ADD_FAILURE() << "no UsageError was thrown";
  return "";
}

}  // namespace pfc::test
