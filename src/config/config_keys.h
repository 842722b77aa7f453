// The one table of configuration keys. Parsing, validation, config_to_toml and the key
// reference all walk this table, so a key's name, type, limits and documentation are written
// once. A key is a pointer to its Config member; its type follows from the member's type.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config.h"

namespace pfc {

using ConfigField =
    std::variant<bool Config::*, std::int64_t Config::*, double Config::*, std::string Config::*,
                 std::vector<std::int64_t> Config::*, std::vector<double> Config::*,
                 std::array<double, 3> Config::*, std::vector<std::string> Config::*,
                 ResumeMode Config::*>;

struct ConfigBound {
  double value;
  bool inclusive;
};

// What a key accepts beyond its type. Bounds apply to a number, or to each element of an
// array. Rules that involve several keys live in validate_config.cpp.
struct ConfigLimits {
  std::optional<ConfigBound> min = std::nullopt;
  std::optional<ConfigBound> max = std::nullopt;
  std::string_view choices = {};  // strings: the allowed values separated by '|' (empty: any)
  bool non_empty = false;         // strings, and each string of a list: must not be ""
  std::size_t length = 0;         // arrays: exact number of elements (0: any)
};

// What a key decides. A run that continues a checkpoint under another config is told which of
// its `training` keys changed (config_differences.h); `operation` keys only say where, how long
// or how the run is carried out, and change freely between attempts.
enum class KeyRole {
  training,  // what the run computes: the model, the loss, the optimiser, the data, the schedule
  operation  // where it writes, when it stops and logs, how it is executed and watched
};

struct ConfigKey {
  std::string_view name;
  ConfigField field;
  std::string_view doc;
  ConfigLimits limits = {};
  KeyRole role = KeyRole::training;
};

// Every key, in the order config_to_toml writes them.
std::span<const ConfigKey> config_keys();

// The key of that name, or nullptr.
const ConfigKey* find_config_key(std::string_view name);

// The known key closest to a misspelt name (edit distance), or "" when none is close.
std::string_view nearest_config_key(std::string_view name);

// "an integer", "a number", "an array of 3 numbers", ...
std::string describe_type(const ConfigKey& key);

// What the limits allow, e.g. "> 0", "in [0, 1)", "one of dp|mp|pfc"; "" when unlimited.
std::string describe_limits(const ConfigKey& key);

// The bounds alone: ">= 1", "in (0, 1]"; "" when there are none.
std::string describe_range(const ConfigLimits& limits);

// Whether the key holds an array.
bool is_array_key(const ConfigKey& key);

}  // namespace pfc
