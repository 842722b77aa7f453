#include "pfc/shard_layout.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace pfc {

ShardLayout ShardLayout::make(std::int64_t num_classes, int world, int rank, double sample_rate) {
  if (num_classes < 1)
    throw UsageError(fmt::format("num_classes is {}, expected at least 1", num_classes));
  if (!(sample_rate >= 0.0 && sample_rate <= 1.0))
    throw UsageError(fmt::format("sample_rate is {}, expected a value in [0, 1] (0: the positive "
                                 "classes only)",
                                 sample_rate));
  PFC_CHECK(world >= 1 && rank >= 0 && rank < world, "rank {} is outside a world of {}", rank,
            world);
  ShardLayout l;
  l.num_classes = num_classes;
  l.world = world;
  l.rank = rank;
  const std::int64_t base = num_classes / world, extra = num_classes % world;
  l.num_local = base + (rank < extra ? 1 : 0);
  l.class_start = base * rank + std::min<std::int64_t>(rank, extra);
  // Python's int() truncates, as arcface_torch computes it.
  l.num_sample = static_cast<std::int64_t>(sample_rate * static_cast<double>(l.num_local));
  return l;
}

int ShardLayout::owner_of(std::int64_t global_class) const {
  PFC_CHECK(global_class >= 0 && global_class < num_classes, "class {} is outside [0, {})",
            global_class, num_classes);
  const std::int64_t base = num_classes / world, extra = num_classes % world;
  // The first `extra` ranks hold base + 1 classes each, the rest base.
  const std::int64_t boundary = extra * (base + 1);
  if (global_class < boundary) return static_cast<int>(global_class / (base + 1));
  return static_cast<int>(extra + (global_class - boundary) / base);
}

}  // namespace pfc
