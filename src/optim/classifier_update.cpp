#include "optim/classifier_update.h"

#include <fmt/format.h>

#include "core/error.h"

namespace pfc {

ClassifierUpdate parse_classifier_update(std::string_view name) {
  if (name == "sampled") return ClassifierUpdate::sampled;
  if (name == "dense") return ClassifierUpdate::dense;
  throw UsageError(fmt::format(
      "unknown classifier_update '{}': expected \"sampled\" or \"dense\"", name));
}

std::string_view classifier_update_name(ClassifierUpdate update) {
  return update == ClassifierUpdate::dense ? "dense" : "sampled";
}

}  // namespace pfc
