// The keys in which two configs differ, with both values as TOML, in the key table's order:
// for telling a user why a checkpoint does not fit the run that tries to continue it.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace pfc {

struct ConfigDifference {
  std::string key;
  std::string before;  // the value in `before`
  std::string after;
};

std::vector<ConfigDifference> config_differences(const Config& before, const Config& after);

}  // namespace pfc
