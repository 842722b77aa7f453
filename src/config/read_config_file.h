// The text of a config file, with the messages a user needs when it cannot be had: a missing
// file, a folder, an unreadable one (UsageError, exit code 2).
#pragma once

#include <string>

namespace pfc {

std::string read_config_file(const std::string& path);

}  // namespace pfc
