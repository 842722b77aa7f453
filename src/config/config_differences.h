// The keys in which two configs differ, with both values as TOML, in the key table's order:
// for telling a user why a checkpoint does not fit the run that tries to continue it, or what
// a continued run changes.
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

// The differences in the keys that decide what a run computes (KeyRole::training), leaving out
// those that only say where, how long or how it runs (output, steps, frequent, ...): what a
// run that continues a checkpoint under another config is told.
std::vector<ConfigDifference> training_differences(const Config& before, const Config& after);

}  // namespace pfc
