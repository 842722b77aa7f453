// Checks a whole Config: each key against its limits in the key table, then the rules that
// tie several keys together. Every problem found is reported in one UsageError, each line
// naming the key, where it was set, its value and what is allowed.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "config/config.h"

namespace pfc {

// Where each key was last set ("input/x.toml:12", "--set lr=0.2"); keys missing from it kept
// their defaults.
using ConfigOrigins = std::map<std::string, std::string, std::less<>>;

void validate_config(const Config& cfg, const ConfigOrigins& origins = {});

// The rules that need the number of ranks the run has, known once it has started: every rank
// holds a shard of at least one class (as emulate_world_size requires of a modelled world).
void validate_for_world(const Config& cfg, int world_size);

}  // namespace pfc
