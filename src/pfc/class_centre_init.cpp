#include "pfc/class_centre_init.h"

#include "core/counter_rng.h"

namespace pfc {
namespace {

std::uint64_t init_key(std::uint64_t seed) { return stream_key(seed, "pfc.weight"); }

}  // namespace

float class_centre_init_value(std::uint64_t seed, std::uint64_t index, double stddev) {
  return normal_value(init_key(seed), index, stddev);
}

void init_class_centres(Backend& backend, Tensor& rows, std::int64_t first_row,
                        std::uint64_t seed, double stddev) {
  check_dtype(rows, DType::f32, "init_class_centres", "rows");
  PFC_CHECK(rows.rank() == 2, "init_class_centres: rows {} must be [rows, emb]",
            rows.describe());
  // Drawn where the rows live: a shard of millions of centres is never staged on the host.
  backend.fill_normal(rows, init_key(seed), static_cast<std::uint64_t>(first_row * rows.dim(1)),
                      stddev);
}

}  // namespace pfc
