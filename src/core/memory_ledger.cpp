#include "core/memory_ledger.h"

#include <algorithm>

namespace pfc {

void MemoryLedger::on_allocate(MemoryPurpose purpose, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  const auto p = static_cast<std::size_t>(purpose);
  state_.in_use[p] += static_cast<std::int64_t>(bytes);
  state_.total_in_use += static_cast<std::int64_t>(bytes);
  state_.peak_by_purpose[p] = std::max(state_.peak_by_purpose[p], state_.in_use[p]);
  state_.total_peak = std::max(state_.total_peak, state_.total_in_use);
}

void MemoryLedger::on_free(MemoryPurpose purpose, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  const auto p = static_cast<std::size_t>(purpose);
  state_.in_use[p] -= static_cast<std::int64_t>(bytes);
  state_.total_in_use -= static_cast<std::int64_t>(bytes);
}

void MemoryLedger::reset_peak() {
  std::lock_guard lock(mutex_);
  state_.peak_by_purpose = state_.in_use;
  state_.total_peak = state_.total_in_use;
}

MemorySnapshot MemoryLedger::snapshot() const {
  std::lock_guard lock(mutex_);
  return state_;
}

}  // namespace pfc
