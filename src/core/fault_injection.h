// PFC_FAULT: injected crashes, to test that a run resumes after one.
//   PFC_FAULT="rank:R,step:S"                rank R throws at the start of step S (an error the
//                                            ranks report and exit on);
//   PFC_FAULT="rank:R,step:S,at:checkpoint"  rank R sends itself SIGKILL in the middle of writing
//                                            its shard of the checkpoint of step S (a node dying
//                                            mid-write: no handler, no cleanup, nothing flushed).
//   PFC_FAULT="rank:R,step:S,at:verification" rank R throws as the verification after step S
//                                            begins (one rank failing while the others verify).
//   PFC_FAULT="rank:R,step:S,at:no_room"     rank R finds neither free disk space nor free host
//                                            memory for the checkpoint of step S (a full disk
//                                            or host, which the checkpoint must refuse before
//                                            it stages or writes anything).
// The trainer checks the step and no_room points, the checkpoint writer the checkpoint point,
// the verification callback the verification point.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pfc {

// Where an injected fault strikes.
enum class FaultPoint {
  step,        // "at:step" (the default): the start of the step
  checkpoint,  // "at:checkpoint": inside write_checkpoint, after part of the shard is written
  verification,  // "at:verification": as the verification after the step begins
  no_room,       // "at:no_room": the checkpoint of the step finds no disk space or host memory
};

struct InjectedFault {
  int rank = 0;
  std::int64_t step = 0;
  FaultPoint at = FaultPoint::step;
};

// "rank:R,step:S[,at:step|checkpoint|verification|no_room]" (items in any order); "" is no fault. Anything else is
// a UsageError.
std::optional<InjectedFault> parse_injected_fault(std::string_view spec);
// The fault PFC_FAULT asks for, if set.
std::optional<InjectedFault> injected_fault_from_environment();
// Throws UsageError when the fault names a rank the run does not have (it would never strike).
void check_fault_rank(const std::optional<InjectedFault>& fault, int world_size);
// Throws pfc::Error("injected fault on rank R at step S") when this is that rank and step and
// the fault strikes at `point` (the step or the verification).
void check_injected_fault(const std::optional<InjectedFault>& fault, int rank,
                          std::int64_t step, FaultPoint point = FaultPoint::step);
// Whether `fault` strikes rank `rank` at `point` of step `step`.
bool fault_strikes(const std::optional<InjectedFault>& fault, int rank, std::int64_t step,
                   FaultPoint point);
// The checkpoint writer's fault point, called while rank `rank` is half-way through writing its
// shard of the checkpoint of step `step`: raises SIGKILL on this process when `fault` is an
// at:checkpoint fault for that rank and step; otherwise does nothing.
void kill_at_checkpoint_fault(const std::optional<InjectedFault>& fault, int rank,
                              std::int64_t step);

}  // namespace pfc
