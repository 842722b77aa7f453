// How the optimiser moves PartialFC's class centres when a step samples some of them: the two
// versions of arcface_torch (config key `classifier_update`).
//  - sampled: the seed's partial_fc.py. The sampled rows are gathered with their moments,
//    stepped, and written back; every other row and its moments stay as they are.
//  - dense: today's partial_fc_v2.py. The centres are one parameter whose gradient is zero off
//    the sampled rows, so every row decays and every moment moves each step.
// At sample rate 1 (and for dp and mp) every row is sampled and the two agree.
#pragma once

#include <string_view>

namespace pfc {

enum class ClassifierUpdate { sampled, dense };

// "sampled" | "dense"; throws pfc::UsageError naming the value otherwise.
ClassifierUpdate parse_classifier_update(std::string_view name);
std::string_view classifier_update_name(ClassifierUpdate update);

}  // namespace pfc
