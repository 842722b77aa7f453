#include "pfc/pfc_method.h"

#include <fmt/format.h>

#include "core/error.h"

namespace pfc {

PfcMethod parse_pfc_method(std::string_view text) {
  if (text == "dp") return PfcMethod::dp;
  if (text == "mp") return PfcMethod::mp;
  if (text == "pfc") return PfcMethod::pfc;
  throw UsageError(fmt::format("unknown PartialFC method \"{}\": expected dp, mp or pfc", text));
}

std::string_view pfc_method_name(PfcMethod method) {
  switch (method) {
    case PfcMethod::dp: return "dp";
    case PfcMethod::mp: return "mp";
    case PfcMethod::pfc: return "pfc";
  }
  return "?";
}

}  // namespace pfc
