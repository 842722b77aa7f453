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
  PFC_CHECK(rows.rank() == 2, "init_class_centres: rows {} must be [rows, emb]",
            rows.describe());
  // Drawn where the rows live: a shard of millions of centres is never staged on the host.
  const auto first = static_cast<std::uint64_t>(first_row * rows.dim(1));
  // 16-bit stored centres take the f32 values rounded to nearest.
  if (rows.dtype() == DType::f32 || is_16bit_float(rows.dtype())) {
    backend.fill_normal(rows, init_key(seed), first, stddev);
    return;
  }
  // An f64 run starts from the same f32 values as an f32 one.
  check_dtype(rows, DType::f64, "init_class_centres", "rows");
  Tensor drawn = backend.empty(rows.shape(), DType::f32, MemoryPurpose::workspace);
  backend.fill_normal(drawn, init_key(seed), first, stddev);
  backend.cast(drawn, rows);
}

}  // namespace pfc
