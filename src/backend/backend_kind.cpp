#include "backend/backend_kind.h"

#include <fmt/format.h>

#include "core/error.h"

namespace pfc {

std::string_view backend_kind_name(BackendKind kind) {
  switch (kind) {
    case BackendKind::cpu: return "cpu";
    case BackendKind::cuda: return "cuda";
    case BackendKind::meta: return "meta";
  }
  return "?";
}

BackendKind parse_backend_kind(std::string_view name, std::string_view key) {
  for (BackendKind kind : {BackendKind::cpu, BackendKind::cuda, BackendKind::meta})
    if (name == backend_kind_name(kind)) return kind;
  throw UsageError(fmt::format("{} = \"{}\": expected \"cpu\", \"cuda\" or \"meta\"", key, name));
}

}  // namespace pfc
