#include "config/assign_config_value.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

#include "config/format_config_value.h"
#include "core/error.h"

namespace pfc {

namespace {

std::string toml_text(const toml::node& value) {
  if (const auto* s = value.as_string()) return toml_string(s->get());
  if (const auto* i = value.as_integer()) return fmt::format("{}", i->get());
  if (const auto* f = value.as_floating_point()) return toml_float(f->get());
  if (const auto* b = value.as_boolean()) return b->get() ? "true" : "false";
  if (const auto* a = value.as_array()) {
    std::vector<std::string> items;
    for (const toml::node& element : *a) items.push_back(toml_text(element));
    return fmt::format("[{}]", fmt::join(items, ", "));
  }
  std::ostringstream out;  // tables, dates and times: toml++'s own layout
  value.visit([&out](const auto& v) { out << v; });
  return out.str();
}

std::string_view type_word(const toml::node& value) {
  switch (value.type()) {
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "number";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::array: return "array";
    case toml::node_type::table: return "table";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "date-time";
    case toml::node_type::none: break;
  }
  return "value";
}

std::optional<double> as_number(const toml::node& value) {
  if (const auto* f = value.as_floating_point()) return f->get();
  if (const auto* i = value.as_integer()) return static_cast<double>(i->get());
  return std::nullopt;
}

// Each element of an array through `convert`, or nullopt if one does not convert.
template <typename T, typename Convert>
std::optional<std::vector<T>> as_vector(const toml::node& value, Convert convert) {
  const auto* a = value.as_array();
  if (!a) return std::nullopt;
  std::vector<T> out;
  for (const toml::node& element : *a) {
    const std::optional<T> v = convert(element);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::optional<std::int64_t> as_integer(const toml::node& value) {
  if (const auto* i = value.as_integer()) return i->get();
  return std::nullopt;
}

std::optional<std::string> as_string(const toml::node& value) {
  if (const auto* s = value.as_string()) return s->get();
  return std::nullopt;
}

// Stores the converted value, or says that the value is not of the key's type.
struct Assigner {
  Config& cfg;
  const toml::node& value;

  bool operator()(bool Config::*m) const {
    const auto* b = value.as_boolean();
    if (b) cfg.*m = b->get();
    return b != nullptr;
  }
  bool operator()(std::int64_t Config::*m) const { return store(m, as_integer(value)); }
  bool operator()(double Config::*m) const { return store(m, as_number(value)); }
  bool operator()(std::string Config::*m) const {
    const auto* s = value.as_string();
    if (s) cfg.*m = s->get();
    return s != nullptr;
  }
  bool operator()(std::vector<std::int64_t> Config::*m) const {
    return store(m, as_vector<std::int64_t>(value, as_integer));
  }
  bool operator()(std::vector<double> Config::*m) const {
    return store(m, as_vector<double>(value, as_number));
  }
  bool operator()(std::array<double, 3> Config::*m) const {
    const auto v = as_vector<double>(value, as_number);
    if (!v || v->size() != 3) return false;
    std::copy(v->begin(), v->end(), (cfg.*m).begin());
    return true;
  }
  bool operator()(std::vector<std::string> Config::*m) const {
    return store(m, as_vector<std::string>(value, as_string));
  }

  bool operator()(ResumeMode Config::*m) const {
    if (const auto* b = value.as_boolean()) {
      cfg.*m = b->get() ? ResumeMode::on : ResumeMode::off;
      return true;
    }
    const auto* s = value.as_string();
    if (!s || s->get() != "auto") return false;
    cfg.*m = ResumeMode::automatic;
    return true;
  }

  template <typename T>
  bool store(T Config::*m, std::optional<T> v) const {
    if (v) cfg.*m = std::move(*v);
    return v.has_value();
  }
};

// Text that reads as a number TOML cannot hold (an integer beyond 64 bits, a float beyond
// double), which `--set` passes on as text. A string that holds an ordinary number
// (`config.lr = "0.1"` in a Python config) is a string, and said to be one.
bool is_unrepresentable_number(const ConfigKey& key, const toml::node& value) {
  const bool numeric = std::holds_alternative<std::int64_t Config::*>(key.field) ||
                       std::holds_alternative<double Config::*>(key.field);
  const auto* s = value.as_string();
  static const std::regex integer(R"([+-]?[0-9][0-9_]*)");
  static const std::regex number(R"([+-]?[0-9][0-9_]*(\.[0-9_]*)?([eE][+-]?[0-9]+)?)");
  if (!numeric || !s || !std::regex_match(s->get(), number)) return false;
  std::string digits = s->get();
  std::erase(digits, '_');
  if (std::regex_match(digits, integer)) {
    std::int64_t parsed = 0;
    const auto [end, error] = std::from_chars(
        digits.data() + (digits[0] == '+'), digits.data() + digits.size(), parsed);
    return error == std::errc::result_out_of_range;
  }
  return std::isinf(std::strtod(digits.c_str(), nullptr));
}

}  // namespace

std::string describe_toml_value(const toml::node& value) {
  return fmt::format("{} {}", type_word(value), toml_text(value));
}

void assign_config_value(Config& cfg, const ConfigKey& key, const toml::node& value,
                         std::string_view where) {
  if (std::visit(Assigner{cfg, value}, key.field)) return;
  if (is_unrepresentable_number(key, value))
    throw UsageError(fmt::format(
        "key '{}' in {} must be {}, got {}, which is out of range ({})", key.name, where,
        describe_type(key), value.as_string()->get(),
        std::holds_alternative<double Config::*>(key.field)
            ? "a number holds at most about 1.8e308"
            : "an integer holds at most 9223372036854775807"));
  throw UsageError(fmt::format("key '{}' in {} must be {}, got {}", key.name, where,
                               describe_type(key), describe_toml_value(value)));
}

}  // namespace pfc
