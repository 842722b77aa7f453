#include "config/read_config_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace pfc {

std::string read_config_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw UsageError(fmt::format("config file '{}' does not exist", path));
  if (fs::is_directory(path, ec))
    throw UsageError(fmt::format("config file '{}' is a directory, not a config file", path));
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad())
    throw UsageError(fmt::format("cannot read config file '{}': {}", path, std::strerror(errno)));
  return text.str();
}

}  // namespace pfc
