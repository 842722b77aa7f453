#include "pfc/margin_gradient.h"

#include <fmt/format.h>

#include "core/error.h"

namespace pfc {

MarginGradient parse_margin_gradient(std::string_view name) {
  if (name == "exact") return MarginGradient::exact;
  if (name == "straight_through") return MarginGradient::straight_through;
  throw UsageError(fmt::format(
      "unknown margin_gradient '{}': expected \"exact\" or \"straight_through\"", name));
}

std::string_view margin_gradient_name(MarginGradient gradient) {
  return gradient == MarginGradient::exact ? "exact" : "straight_through";
}

}  // namespace pfc
