// Errors and the check macro every layer uses. A check names the file and line and the
// condition that failed, plus a message formatted with fmt, so that a failure on rank 7 of
// 64 can be read without a debugger.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace pfc {

// Exit codes of the pfc executable.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,   // a run that failed: bad data, a dead rank, a library error
  kExitUsage = 2,     // the user asked for something invalid: config, command line
  kExitCheckFailed = 3,  // a comparison (golden) ran and found values out of tolerance
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int exit_code = kExitFailure)
      : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// A mistake in what the user asked for (config key, value, command line): exit code 2.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what, kExitUsage) {}
};

// A device (or host) allocation that cannot be satisfied. Carries the figures so that a
// benchmark cell can record "does not fit: needed vs available" instead of crashing.
class OutOfMemoryError : public Error {
 public:
  OutOfMemoryError(const std::string& what, long long needed_bytes, long long available_bytes)
      : Error(what), needed_bytes_(needed_bytes), available_bytes_(available_bytes) {}
  long long needed_bytes() const { return needed_bytes_; }
  long long available_bytes() const { return available_bytes_; }

 private:
  long long needed_bytes_;
  long long available_bytes_;
};

[[noreturn]] void throw_check_failure(const char* file, int line, const char* condition,
                                      const std::string& message);

}  // namespace pfc

#define PFC_CHECK(cond, ...)                                                         \
  do {                                                                               \
    if (!(cond)) ::pfc::throw_check_failure(__FILE__, __LINE__, #cond,               \
                                            ::fmt::format(__VA_ARGS__));             \
  } while (0)
