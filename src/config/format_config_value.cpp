#include "config/format_config_value.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <vector>

namespace pfc {

namespace {

template <typename Range, typename Format>
std::string toml_array(const Range& values, Format format) {
  std::vector<std::string> items;
  for (const auto& v : values) items.push_back(format(v));
  return fmt::format("[{}]", fmt::join(items, ", "));
}

}  // namespace

std::string toml_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = fmt::format("{}", value);  // shortest text that reads back exactly
  // TOML reads "1" as an integer; a float needs a fraction or an exponent.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string toml_string(std::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          out += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

std::string format_config_value(const Config& cfg, const ConfigKey& key) {
  struct Writer {
    const Config& cfg;
    std::string operator()(bool Config::*m) const { return cfg.*m ? "true" : "false"; }
    std::string operator()(std::int64_t Config::*m) const { return fmt::format("{}", cfg.*m); }
    std::string operator()(double Config::*m) const { return toml_float(cfg.*m); }
    std::string operator()(std::string Config::*m) const { return toml_string(cfg.*m); }
    std::string operator()(std::vector<std::int64_t> Config::*m) const {
      return toml_array(cfg.*m, [](std::int64_t v) { return fmt::format("{}", v); });
    }
    std::string operator()(std::vector<double> Config::*m) const {
      return toml_array(cfg.*m, toml_float);
    }
    std::string operator()(std::array<double, 3> Config::*m) const {
      return toml_array(cfg.*m, toml_float);
    }
    std::string operator()(std::vector<std::string> Config::*m) const {
      return toml_array(cfg.*m, toml_string);
    }
    std::string operator()(ResumeMode Config::*m) const {
      switch (cfg.*m) {
        case ResumeMode::on: return "true";
        case ResumeMode::automatic: return "\"auto\"";
        case ResumeMode::off: break;
      }
      return "false";
    }
  };
  return std::visit(Writer{cfg}, key.field);
}

}  // namespace pfc
