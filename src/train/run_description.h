// What metrics.h5 records about a run beyond its config: the command line, world size,
// hosts, GPUs and library versions, gathered from every rank, and the Slurm job it runs in.
#pragma once

#include <string>

#include "backend/backend.h"
#include "comm/comm.h"
#include "config/config.h"
#include "io/metrics_writer.h"

namespace pfc {

// Collective over comm (host names travel over it).
RunInfo describe_run(const Config& cfg, Comm& comm, Backend& backend, const std::string& command_line);

}  // namespace pfc
