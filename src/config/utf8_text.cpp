#include "config/utf8_text.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <string>

#include "config/format_config_value.h"
#include "core/error.h"

namespace pfc {

namespace {

// The value as a terminal shows it whatever its encoding: bytes beyond ASCII as \xHH.
std::string shown_as_ascii(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80)
      out += fmt::format("\\x{:02X}", byte);
    else
      out += c;
  }
  return out;
}

}  // namespace

void check_utf8_text(std::string_view text, std::string_view what, std::string_view why) {
  // TOML's parser checks UTF-8 strictly (and is what reads a recorded config back).
  try {
    static_cast<void>(toml::parse(fmt::format("v = {}", toml_string(text))));
    return;
  } catch (const toml::parse_error&) {
    // Not UTF-8: the message below.
  }
  throw UsageError(fmt::format("{} '{}' is not UTF-8 text, and {} (rename the file or "
                               "folder, or name it through a link whose name is UTF-8)",
                               what, shown_as_ascii(text), why));
}

}  // namespace pfc
