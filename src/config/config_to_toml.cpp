#include "config/config_to_toml.h"

#include <fmt/format.h>

#include "config/config_keys.h"
#include "config/format_config_value.h"

namespace pfc {

std::string config_to_toml(const Config& cfg, ConfigComments comments) {
  std::string out;
  for (const ConfigKey& key : config_keys()) {
    if (comments == ConfigComments::kDocs) {
      const std::string limits = describe_limits(key);
      out += fmt::format("# {} ({}{}{})\n", key.doc, describe_type(key),
                         limits.empty() ? "" : "; ", limits);
    }
    out += fmt::format("{} = {}\n", key.name, format_config_value(cfg, key));
  }
  return out;
}

}  // namespace pfc
