// The backends pfc can compute on, as the config's `device` names them: cpu, cuda, and meta
// (plans a run on one of the other two without running it, backend/meta).
#pragma once

#include <string_view>

namespace pfc {

enum class BackendKind { cpu, cuda, meta };

std::string_view backend_kind_name(BackendKind kind);
// "cpu" | "cuda" | "meta"; throws pfc::UsageError naming `key` for anything else.
BackendKind parse_backend_kind(std::string_view name, std::string_view key);

}  // namespace pfc
