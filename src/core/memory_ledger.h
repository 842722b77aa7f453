// Exact accounting of the bytes a device holds, by purpose, with the peak since the last
// reset. Every allocation goes through an Allocator that reports here, so the figure written
// to metrics.h5 is what the program asked for, not an estimate.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>

namespace pfc {

enum class MemoryPurpose : std::uint8_t {
  weights,      // parameters: fp32 masters, fp16 working copies, class centres
  optimizer,    // momentum buffers
  gradients,
  activations,  // saved for backward and transient outputs
  workspace,    // library scratch (cuDNN, cuBLAS), sampling tables
  comm,         // gathered batches and collective buffers
  data,         // input batches
  count
};

constexpr std::size_t kMemoryPurposeCount = static_cast<std::size_t>(MemoryPurpose::count);

constexpr std::string_view memory_purpose_name(MemoryPurpose p) {
  switch (p) {
    case MemoryPurpose::weights: return "weights";
    case MemoryPurpose::optimizer: return "optimizer";
    case MemoryPurpose::gradients: return "gradients";
    case MemoryPurpose::activations: return "activations";
    case MemoryPurpose::workspace: return "workspace";
    case MemoryPurpose::comm: return "comm";
    case MemoryPurpose::data: return "data";
    case MemoryPurpose::count: break;
  }
  return "?";
}

// One figure per purpose, in MemoryPurpose order.
using MemoryPeaks = std::array<std::int64_t, kMemoryPurposeCount>;

struct MemorySnapshot {
  std::array<std::int64_t, kMemoryPurposeCount> in_use{};
  std::array<std::int64_t, kMemoryPurposeCount> peak_by_purpose{};
  std::int64_t total_in_use = 0;
  std::int64_t total_peak = 0;
};

class MemoryLedger {
 public:
  void on_allocate(MemoryPurpose purpose, std::size_t bytes);
  void on_free(MemoryPurpose purpose, std::size_t bytes);
  // Starts a new peak window (the trainer calls it at the start of every step).
  void reset_peak();
  MemorySnapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  MemorySnapshot state_;
};

}  // namespace pfc
