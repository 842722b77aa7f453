#include "plan/gpu_specs.h"

#include <fmt/format.h>

#include <cctype>
#include <string>

#include "core/error.h"

namespace pfc {

namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

const GpuSpec kSpecs[] = {
    // NVIDIA H200 Tensor Core GPU datasheet (2024), SXM column: FP16 Tensor Core 1,979 TFLOPS
    // with sparsity, so 989.5 dense; FP32 67 TFLOPS; 141 GB HBM3e at 4.8 TB/s; NVLink
    // 900 GB/s (both directions together, so 450 each way). Memory: nvidia-smi's total on an
    // H200 SXM, 143771 MiB (140.4 GiB; 139.8 GiB free with a context).
    // Measured on the project's H200 (SPEC.md): f16 GEMM 757-872 TFLOP/s, copy 4.28 TB/s.
    {"h200", "NVIDIA H200 SXM 141GB", 143771 * kMiB, 989.5e12, 67e12, 4.8e12, 450e9},
    // NVIDIA Tesla V100 GPU datasheet (2018), SXM2 column: Tensor Performance 125 TFLOPS;
    // single precision 15.7 TFLOPS; 32 GB HBM2 at 900 GB/s; NVLink 300 GB/s (six links of
    // 25 GB/s each way: 150 each way, EmulatedComm's default). Memory: nvidia-smi's total on a
    // V100-SXM2-32GB, 32510 MiB. The seed's benchmark ran on eight of them.
    {"v100", "Tesla V100-SXM2-32GB", 32510 * kMiB, 125e12, 15.7e12, 900e9, 150e9},
};

}  // namespace

std::span<const GpuSpec> gpu_specs() { return kSpecs; }

const GpuSpec& gpu_spec(std::string_view key) {
  std::string lower(key);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string known;
  for (const GpuSpec& spec : kSpecs) {
    if (spec.key == lower) return spec;
    known += (known.empty() ? "" : ", ") + std::string(spec.key);
  }
  throw UsageError(fmt::format("unknown GPU '{}' (known: {})", key, known));
}

}  // namespace pfc
