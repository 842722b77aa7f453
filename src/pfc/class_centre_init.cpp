#include "pfc/class_centre_init.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/counter_rng.h"

namespace pfc {
namespace {

std::uint64_t init_key(std::uint64_t seed) { return stream_key(seed, "pfc.weight"); }

struct NormalPair {
  double cos_half, sin_half;
};

NormalPair box_muller(std::uint64_t key, std::uint64_t pair) {
  // 1 - u lies in (0, 1], so the logarithm is finite.
  const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform53(key, 2 * pair)));
  const double angle = 2.0 * std::numbers::pi * uniform53(key, 2 * pair + 1);
  return {radius * std::cos(angle), radius * std::sin(angle)};
}

// Rows staged on the host per copy to the device: bounded, so a shard of millions of rows
// never needs a second copy of itself in host memory.
constexpr std::int64_t kStageElements = 1 << 20;

}  // namespace

float class_centre_init_value(std::uint64_t seed, std::uint64_t index, double stddev) {
  const NormalPair z = box_muller(init_key(seed), index / 2);
  return static_cast<float>(stddev * (index % 2 == 0 ? z.cos_half : z.sin_half));
}

void init_class_centres(Backend& backend, Tensor& rows, std::int64_t first_row,
                        std::uint64_t seed, double stddev) {
  check_dtype(rows, DType::f32, "init_class_centres", "rows");
  PFC_CHECK(rows.rank() == 2, "init_class_centres: rows {} must be [rows, emb]",
            rows.describe());
  const std::uint64_t key = init_key(seed);
  const std::int64_t emb = rows.dim(1);
  const std::int64_t rows_per_stage =
      std::max<std::int64_t>(1, kStageElements / std::max<std::int64_t>(emb, 1));
  for (std::int64_t r0 = 0; r0 < rows.dim(0); r0 += rows_per_stage) {
    const std::int64_t r1 = std::min(rows.dim(0), r0 + rows_per_stage);
    Tensor stage = Tensor::host({r1 - r0, emb}, DType::f32, MemoryPurpose::workspace);
    float* out = stage.data<float>();
    const auto begin = static_cast<std::uint64_t>((first_row + r0) * emb);
    const auto end = static_cast<std::uint64_t>((first_row + r1) * emb);
    std::uint64_t i = begin;
    while (i < end) {
      const NormalPair z = box_muller(key, i / 2);
      if (i % 2 == 0) {
        out[i - begin] = static_cast<float>(stddev * z.cos_half);
        if (i + 1 < end) out[i + 1 - begin] = static_cast<float>(stddev * z.sin_half);
        i += 2;
      } else {
        out[i - begin] = static_cast<float>(stddev * z.sin_half);
        ++i;
      }
    }
    Tensor target = rows.rows(r0, r1);
    backend.copy(stage, target);
  }
}

}  // namespace pfc
