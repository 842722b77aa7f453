// Sets one key of a Config from a parsed TOML value, checking its type. A mismatch is a
// UsageError naming the key, where the value was written and the type the key needs.
#pragma once

#include <toml++/toml.h>

#include <string>
#include <string_view>

#include "config/config.h"
#include "config/config_keys.h"

namespace pfc {

// `where` says where the value was written: "input/x.toml:12" or "--set lr=fast".
void assign_config_value(Config& cfg, const ConfigKey& key, const toml::node& value,
                         std::string_view where);

// A TOML value with its type, for messages: string "fast", integer 3, array [1, 2.5].
std::string describe_toml_value(const toml::node& value);

}  // namespace pfc
