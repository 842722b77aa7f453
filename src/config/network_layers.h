// Blocks per stage of the backbone named by Config::network (SPEC: iresnet depths).
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.h"

namespace pfc {

// r18 [2,2,2,2], r34 [3,4,6,3], r50 [3,4,14,3], r100 [3,13,30,3], r200 [6,26,60,6];
// "custom": cfg.layers. Any other name is a UsageError.
std::vector<std::int64_t> network_layers(const Config& cfg);

}  // namespace pfc
