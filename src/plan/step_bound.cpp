#include "plan/step_bound.h"

namespace pfc {

StepBound bound_step(const Work& step, const CollectiveWork& comm, const GpuSpec& gpu,
                     std::int64_t global_batch) {
  StepBound b;
  b.tensor_s = step.tensor_flops / gpu.tensor_f16_flops;
  b.other_s = step.other_flops / gpu.fp32_flops;
  b.memory_s = (step.bytes_read + step.bytes_written) / gpu.memory_bytes_per_s;
  b.comm_s = comm.bus_bytes / gpu.link_bytes_per_s;
  b.step_s = b.tensor_s;
  b.limiter = "tensor cores";
  for (const auto& [seconds, name] : {std::pair<double, std::string_view>{b.other_s, "fp32 units"},
                                      {b.memory_s, "memory"},
                                      {b.comm_s, "interconnect"}}) {
    if (seconds > b.step_s) {
      b.step_s = seconds;
      b.limiter = name;
    }
  }
  b.samples_per_s = b.step_s > 0 ? static_cast<double>(global_batch) / b.step_s : 0;
  return b;
}

}  // namespace pfc
