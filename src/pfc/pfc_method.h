// How the classifier is held across ranks: dp (every rank holds all classes; gradients are
// all-reduced), mp (classes split by rank, every class used each step), pfc (split as mp,
// each step uses the positive classes plus sampled negatives).
#pragma once

#include <string_view>

namespace pfc {

enum class PfcMethod { dp, mp, pfc };

// "dp", "mp" or "pfc"; anything else is a UsageError naming the value and the choices.
PfcMethod parse_pfc_method(std::string_view text);
std::string_view pfc_method_name(PfcMethod method);

}  // namespace pfc
