#include "core/fault_injection.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/error.h"

namespace pfc {

namespace {

constexpr const char* kFaultSyntax =
    "\"rank:R,step:S\" or \"rank:R,step:S,at:checkpoint|verification|no_room\"";

std::int64_t parse_number(std::string_view text, std::string_view spec) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0)
    throw UsageError(fmt::format("PFC_FAULT '{}': '{}' is not a non-negative integer (expected {})",
                                 spec, text, kFaultSyntax));
  return value;
}

FaultPoint parse_fault_point(std::string_view text, std::string_view spec) {
  if (text == "step") return FaultPoint::step;
  if (text == "checkpoint") return FaultPoint::checkpoint;
  if (text == "verification") return FaultPoint::verification;
  if (text == "no_room") return FaultPoint::no_room;
  throw UsageError(fmt::format("PFC_FAULT '{}': at:{} is not a fault point (expected at:step, "
                               "at:checkpoint, at:verification or at:no_room)",
                               spec, text));
}

}  // namespace

std::optional<InjectedFault> parse_injected_fault(std::string_view spec) {
  if (spec.empty()) return std::nullopt;
  std::optional<std::int64_t> rank, step;
  std::optional<FaultPoint> at;
  for (std::size_t begin = 0; begin <= spec.size();) {
    const std::size_t comma = std::min(spec.find(',', begin), spec.size());
    const std::string_view item = spec.substr(begin, comma - begin);
    begin = comma + 1;
    const std::size_t colon = item.find(':');
    const std::string_view key = item.substr(0, colon);
    const std::string_view value =
        colon == std::string_view::npos ? std::string_view() : item.substr(colon + 1);
    const bool known = key == "rank" || key == "step" || key == "at";
    const bool repeated = (key == "rank" && rank) || (key == "step" && step) || (key == "at" && at);
    if (colon == std::string_view::npos || !known || repeated)
      throw UsageError(fmt::format("PFC_FAULT '{}': cannot read '{}' (expected {}, e.g. "
                                   "rank:1,step:20)",
                                   spec, item, kFaultSyntax));
    if (key == "at")
      at = parse_fault_point(value, spec);
    else
      (key == "rank" ? rank : step) = parse_number(value, spec);
  }
  if (!rank || !step)
    throw UsageError(fmt::format("PFC_FAULT '{}': needs both rank and step ({})", spec,
                                 kFaultSyntax));
  if (*rank > std::numeric_limits<int>::max())
    throw UsageError(fmt::format("PFC_FAULT '{}': rank {} is out of range", spec, *rank));
  return InjectedFault{static_cast<int>(*rank), *step, at.value_or(FaultPoint::step)};
}

std::optional<InjectedFault> injected_fault_from_environment() {
  const char* spec = std::getenv("PFC_FAULT");
  return parse_injected_fault(spec ? spec : "");
}

void check_fault_rank(const std::optional<InjectedFault>& fault, int world_size) {
  if (!fault || fault->rank < world_size) return;
  throw UsageError(fmt::format("PFC_FAULT names rank {}, but this run has {} rank{} (0..{}): the "
                               "fault would never strike",
                               fault->rank, world_size, world_size == 1 ? "" : "s",
                               world_size - 1));
}

void check_injected_fault(const std::optional<InjectedFault>& fault, int rank,
                          std::int64_t step, FaultPoint point) {
  if (fault && fault->at == point && fault->rank == rank && fault->step == step)
    throw Error(fmt::format("injected fault on rank {} at {} {}", rank,
                            point == FaultPoint::verification ? "the verification of step"
                                                              : "step",
                            step));
}

bool fault_strikes(const std::optional<InjectedFault>& fault, int rank, std::int64_t step,
                   FaultPoint point) {
  return fault && fault->at == point && fault->rank == rank && fault->step == step;
}

void kill_at_checkpoint_fault(const std::optional<InjectedFault>& fault, int rank,
                              std::int64_t step) {
  if (!fault || fault->at != FaultPoint::checkpoint || fault->rank != rank || fault->step != step)
    return;
  // Said before dying so that a log shows the kill was the injected one; stderr is unbuffered.
  std::fprintf(stderr, "injected fault: rank %d kills itself while writing checkpoint %lld\n",
               rank, static_cast<long long>(step));
  std::raise(SIGKILL);
}

}  // namespace pfc
