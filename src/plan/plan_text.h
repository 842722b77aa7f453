// What `pfc plan` prints: for the rank that needs the most, memory by purpose (pfc's tensors,
// exact) and the modelled rest, in GiB and as a share of the device's memory, and whether it
// fits ("needs X GiB per rank, Y available" when not); every rank's totals; what a checkpoint
// takes (disk, and the host memory the rank that writes the most stages it through); the
// step's arithmetic per primitive and its collectives; and, on a named GPU, the bound on the
// step.
#pragma once

#include <string>

#include "config/config.h"
#include "plan/run_plan.h"

namespace pfc {

std::string format_plan(const Plan& plan, const Config& cfg);
// "needs 150.21 GiB per rank, 128.40 available" (the rank that needs the most).
std::string plan_shortfall(const Plan& plan);

}  // namespace pfc
