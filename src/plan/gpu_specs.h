// The GPUs a plan can be made for: their memory and peak rates, from which a plan bounds a
// step's time from below (plan/step_bound.h) and judges whether a run fits. Each value's
// source is beside it in gpu_specs.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace pfc {

struct GpuSpec {
  std::string_view key;   // "h200": what `pfc plan --gpu` takes
  std::string_view name;  // "NVIDIA H200 SXM 141GB"
  std::int64_t memory_bytes = 0;     // the device's memory as the driver reports its total
  double tensor_f16_flops = 0;       // dense f16 tensor-core rate (f32 accumulation), FLOP/s
  double fp32_flops = 0;             // f32 FMA rate of the CUDA cores, FLOP/s
  double memory_bytes_per_s = 0;     // device memory bandwidth (read + write), bytes/s
  double link_bytes_per_s = 0;       // one GPU's NVLink bandwidth in each direction, bytes/s:
                                     // the bus bandwidth nccl-tests reports for a ring
};

std::span<const GpuSpec> gpu_specs();
// The spec named `key` (case-insensitive), or pfc::UsageError listing the known ones.
const GpuSpec& gpu_spec(std::string_view key);

}  // namespace pfc
