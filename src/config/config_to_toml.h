// A Config written back as TOML: every key of the key table with its value, in table order.
// Checkpoints and run metadata keep it; parse_config reads it back to the same Config.
#pragma once

#include <string>

#include "config/config.h"

namespace pfc {

enum class ConfigComments { kNone, kDocs };

// With kDocs, each key is preceded by a comment: its documentation, type and what is allowed
// (given Config{}, a reference of every key with its default).
std::string config_to_toml(const Config& cfg, ConfigComments comments = ConfigComments::kNone);

}  // namespace pfc
