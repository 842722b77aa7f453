#include "config/load_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "config/arcface_config.h"
#include "config/assign_config_value.h"
#include "config/config_keys.h"
#include "config/format_config_value.h"
#include "config/read_config_file.h"
#include "config/utf8_text.h"
#include "config/validate_config.h"
#include "core/error.h"

namespace pfc {

namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

const ConfigKey& known_key(std::string_view name, std::string_view where) {
  if (const ConfigKey* key = find_config_key(name)) return *key;
  const std::string_view nearest = nearest_config_key(name);
  if (!nearest.empty())
    throw UsageError(
        fmt::format("unknown key '{}' in {}; did you mean '{}'?", name, where, nearest));
  std::vector<std::string_view> names;
  for (const ConfigKey& key : config_keys()) names.push_back(key.name);
  throw UsageError(fmt::format("unknown key '{}' in {}; the keys are: {}", name, where,
                               fmt::join(names, ", ")));
}

// A text split at kOverridesMarker: the TOML part and the override lines after it.
struct SourceParts {
  std::string_view toml;
  std::vector<std::string> overrides;
};

SourceParts split_source(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    if (trim(text.substr(start, end - start)) == kOverridesMarker) {
      SourceParts parts{text.substr(0, start), {}};
      std::istringstream rest{std::string(text.substr(end))};
      for (std::string line; std::getline(rest, line);) {
        const std::string_view t = trim(line);
        if (!t.empty() && t.front() != '#') parts.overrides.emplace_back(t);
      }
      return parts;
    }
    start = end + 1;
  }
  return {text, {}};
}

toml::table parse_toml(std::string_view text, const std::string& origin) {
  try {
    return toml::parse(text, std::string_view(origin));
  } catch (const toml::parse_error& e) {
    throw UsageError(fmt::format("TOML syntax error in {}:{}:{}: {}", origin,
                                 e.source().begin.line, e.source().begin.column,
                                 e.description()));
  }
}

// One key's value as a file gave it, and where ("input/x.toml:3", "configs/x.py:12").
struct FileSetting {
  std::string key;
  const toml::node* value;
  std::string where;
};

// The keys of a parsed TOML file, in the order they appear in it.
std::vector<FileSetting> toml_settings(const toml::table& table, const std::string& origin) {
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (const auto& [k, node] : table) entries.emplace_back(&k, &node);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.first->source().begin.line < b.first->source().begin.line;
  });
  std::vector<FileSetting> settings;
  for (const auto& [k, node] : entries)
    settings.push_back({std::string(k->str()), node,
                        fmt::format("{}:{}", origin, k->source().begin.line)});
  return settings;
}

void apply_file(Config& cfg, ConfigOrigins& origins, const std::vector<FileSetting>& settings) {
  for (const FileSetting& s : settings) {
    const ConfigKey& key = known_key(s.key, s.where);
    assign_config_value(cfg, key, *s.value, s.where);
    origins[std::string(key.name)] = s.where;
  }
}

// The value of an override as TOML. Text that is not a TOML value stays text, so that
// `method=mp` sets a string and `lr=fast` is reported as `string "fast"`; a string key takes
// its text as is unless it is a quoted TOML string.
toml::table override_value(const ConfigKey& key, std::string_view text) {
  const bool is_string_key = std::holds_alternative<std::string Config::*>(key.field);
  try {
    toml::table parsed = toml::parse(fmt::format("v = {}", text));
    if (parsed.size() == 1 && parsed.contains("v") && (!is_string_key || parsed["v"].is_string()))
      return parsed;
  } catch (const toml::parse_error&) {
    // Not a TOML value: taken as text below.
  }
  return toml::table{{"v", std::string(text)}};
}

// Applies one "key=value" override and returns it as a normalised `key = value` line.
std::string apply_override(Config& cfg, ConfigOrigins& origins, std::string_view text) {
  const std::size_t eq = text.find('=');
  const std::string_view name = trim(text.substr(0, eq));
  if (eq == std::string_view::npos || name.empty())
    throw UsageError(fmt::format("malformed --set '{}': expected key=value (e.g. --set lr=0.2)",
                                 text));
  const std::string where = fmt::format("--set {}", text);
  const ConfigKey& key = known_key(name, where);
  const std::string_view value_text = trim(text.substr(eq + 1));
  check_utf8_text(value_text, fmt::format("--set {}", key.name), kConfigIsUtf8);
  const toml::table value = override_value(key, value_text);
  assign_config_value(cfg, key, *value.get("v"), where);
  origins[std::string(key.name)] = where;
  return fmt::format("{} = {}", key.name, format_config_value(cfg, key));
}

// The file's settings, then the overrides recorded in its source text, then the command
// line's; source_text becomes `source` followed by every override applied.
Config build_config(const std::vector<FileSetting>& settings, std::string source,
                    const std::vector<std::string>& recorded_overrides,
                    const std::vector<std::string>& overrides) {
  Config cfg;
  ConfigOrigins origins;
  apply_file(cfg, origins, settings);
  if (!source.empty() && source.back() != '\n') source += '\n';
  std::vector<std::string> lines;
  for (const std::string& text : recorded_overrides)
    lines.push_back(apply_override(cfg, origins, text));
  for (const std::string& text : overrides) lines.push_back(apply_override(cfg, origins, text));
  if (!lines.empty()) source += fmt::format("{}\n{}\n", kOverridesMarker, fmt::join(lines, "\n"));
  cfg.source_text = std::move(source);
  validate_config(cfg, origins);
  return cfg;
}

// parse_config; warn_if_empty: a file that sets no key at all is worth a warning (an empty or
// truncated file would otherwise train the defaults' million classes without a word).
Config parse_toml_config(std::string_view toml_text, const std::string& origin,
                         const std::vector<std::string>& overrides, bool warn_if_empty) {
  const SourceParts parts = split_source(toml_text);
  const toml::table table = parse_toml(parts.toml, origin);
  if (warn_if_empty && table.empty()) {
    const Config defaults;
    spdlog::warn("{} sets no key: every key not given by --set keeps its default (network = "
                 "\"{}\", num_classes = {}, {} epochs of {} images); input/base.toml lists them "
                 "all",
                 origin, defaults.network, defaults.num_classes, defaults.num_epoch,
                 defaults.num_image);
  }
  return build_config(toml_settings(table, origin), std::string(parts.toml), parts.overrides,
                      overrides);
}

Config load_arcface_config(const std::string& path, const std::vector<std::string>& overrides) {
  ImportedConfig imported = import_arcface_config(path);
  std::vector<FileSetting> settings;
  for (const ImportedSetting& s : imported.settings)
    settings.push_back({s.key, imported.values.get(s.key), s.where});
  Config cfg = build_config(settings, imported.toml_text, {}, overrides);
  cfg.notes = std::move(imported.notes);
  return cfg;
}

}  // namespace

Config parse_config(std::string_view toml_text, const std::string& origin,
                    const std::vector<std::string>& overrides) {
  return parse_toml_config(toml_text, origin, overrides, false);
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  if (std::filesystem::path(path).extension() == ".py") return load_arcface_config(path, overrides);
  return parse_toml_config(read_config_file(path), path, overrides, true);
}

}  // namespace pfc
