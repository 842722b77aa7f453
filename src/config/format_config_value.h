// A configuration value written as TOML, for config_to_toml, the --set lines kept in
// Config::source_text and error messages. Numbers are written in their shortest form that
// reads back to the same double, so a written config reproduces the run exactly.
#pragma once

#include <string>
#include <string_view>

#include "config/config.h"
#include "config/config_keys.h"

namespace pfc {

std::string format_config_value(const Config& cfg, const ConfigKey& key);

// A TOML float: 0.1, 1.0, 1e-05, inf.
std::string toml_float(double value);

// A TOML basic string: quoted, with backslash escapes.
std::string toml_string(std::string_view value);

}  // namespace pfc
