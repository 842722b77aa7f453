#include "config/network_layers.h"

#include <string_view>

#include "core/error.h"

namespace pfc {

namespace {

struct NamedNetwork {
  std::string_view name;
  NetworkFamily family;
  std::vector<std::int64_t> layers;
  std::int64_t scale = 0;  // MobileFaceNet only
};

const NamedNetwork kNetworks[] = {
    {"r18", NetworkFamily::iresnet, {2, 2, 2, 2}},
    {"r34", NetworkFamily::iresnet, {3, 4, 6, 3}},
    {"r50", NetworkFamily::iresnet, {3, 4, 14, 3}},
    {"r100", NetworkFamily::iresnet, {3, 13, 30, 3}},
    {"r200", NetworkFamily::iresnet, {6, 26, 60, 6}},
    {"custom", NetworkFamily::iresnet, {}},
    {"mbf", NetworkFamily::mobilefacenet, {1, 4, 6, 2}, 2},
    {"mbf_large", NetworkFamily::mobilefacenet, {2, 8, 12, 4}, 4},
};

const NamedNetwork& named(const Config& cfg) {
  for (const NamedNetwork& n : kNetworks)
    if (n.name == cfg.network) return n;
  throw UsageError(fmt::format(
      "unknown network \"{}\"; allowed: r18|r34|r50|r100|r200|custom|mbf|mbf_large",
      cfg.network));
}

}  // namespace

NetworkFamily network_family(const Config& cfg) { return named(cfg).family; }

std::vector<std::int64_t> network_layers(const Config& cfg) {
  if (cfg.network == "custom") return cfg.layers;
  return named(cfg).layers;
}

std::int64_t mobilefacenet_scale(const Config& cfg) {
  const NamedNetwork& n = named(cfg);
  if (n.family != NetworkFamily::mobilefacenet)
    throw UsageError(fmt::format("network \"{}\" is no MobileFaceNet", cfg.network));
  return n.scale;
}

}  // namespace pfc
