#include "config/config_differences.h"

#include "config/config_keys.h"
#include "config/format_config_value.h"

namespace pfc {

std::vector<ConfigDifference> config_differences(const Config& before, const Config& after) {
  std::vector<ConfigDifference> differences;
  for (const ConfigKey& key : config_keys()) {
    std::string a = format_config_value(before, key), b = format_config_value(after, key);
    if (a != b) differences.push_back({std::string(key.name), std::move(a), std::move(b)});
  }
  return differences;
}

std::vector<ConfigDifference> training_differences(const Config& before, const Config& after) {
  std::vector<ConfigDifference> differences = config_differences(before, after);
  std::erase_if(differences, [](const ConfigDifference& d) {
    return find_config_key(d.key)->role != KeyRole::training;
  });
  return differences;
}

}  // namespace pfc
