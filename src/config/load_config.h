// Reads a run's configuration: a flat TOML file (or one of arcface_torch's configs/*.py, read
// without running Python: config/arcface_config.h), then `--set key=value` overrides in order,
// then validation of the whole. Every mistake is a UsageError (exit code 2) that names the
// file or override, the key, the value and what is allowed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace pfc {

// Config::source_text is the file's text, then this line, then one `key = value` line per
// override. parse_config reads such a text back (the lines after it are applied as overrides),
// so a run's recorded source_text reproduces its Config.
inline constexpr std::string_view kOverridesMarker =
    "# --set overrides, applied in this order after the lines above:";

// A path ending in .py is an arcface_torch config. Each override is "key=value"; the value is read as a TOML value (lr=0.2,
// margin_list=[1.0,0.0,0.4], method="mp"), and a string key also takes bare text (method=mp).
Config load_config(const std::string& path, const std::vector<std::string>& overrides);

// The same from text in memory; `origin` names it in messages (a path, or "--config").
Config parse_config(std::string_view toml_text, const std::string& origin,
                    const std::vector<std::string>& overrides);

}  // namespace pfc
