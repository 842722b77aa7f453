#include "config/network_layers.h"

#include <string_view>

#include "core/error.h"

namespace pfc {

namespace {

struct NamedDepths {
  std::string_view name;
  std::vector<std::int64_t> layers;
};

const NamedDepths kDepths[] = {
    {"r18", {2, 2, 2, 2}},    {"r34", {3, 4, 6, 3}},     {"r50", {3, 4, 14, 3}},
    {"r100", {3, 13, 30, 3}}, {"r200", {6, 26, 60, 6}},
};

}  // namespace

std::vector<std::int64_t> network_layers(const Config& cfg) {
  if (cfg.network == "custom") return cfg.layers;
  for (const NamedDepths& d : kDepths)
    if (d.name == cfg.network) return d.layers;
  throw UsageError(fmt::format("unknown network \"{}\"; allowed: r18|r34|r50|r100|r200|custom",
                               cfg.network));
}

}  // namespace pfc
