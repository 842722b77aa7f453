// The message of the UsageError (exit code 2) that a call throws, for tests of what users are
// told; a test failure when it throws nothing.
#pragma once

#include <functional>
#include <string>

namespace pfc::test {

std::string usage_error(const std::function<void()>& f);

}  // namespace pfc::test
