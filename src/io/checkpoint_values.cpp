#include "io/checkpoint_values.h"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <optional>

#include "core/bfloat16.h"
#include "core/error.h"
#include "core/half.h"

namespace pfc {

namespace {

const float kLargestUsable = std::sqrt(FLT_MAX);

// Element i of a host f32 tensor, or of stored 16-bit class centres and moments.
float value_at(const Tensor& t, std::int64_t i) {
  switch (t.dtype()) {
    case DType::f16:
      return t.data<Half>()[i].to_float();
    case DType::bf16:
      return t.data<BFloat16>()[i].to_float();
    default:
      return t.data<float>()[i];
  }
}

// The index of the first unusable element of a host tensor.
std::optional<std::int64_t> first_unusable(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return std::nullopt;
  for (std::int64_t i = 0; i < t.numel(); ++i)
    if (!(std::fabs(value_at(t, i)) < kLargestUsable)) return i;  // NaN fails the comparison too
  return std::nullopt;
}

std::string describe_value(float value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+inf" : "-inf";
  return fmt::format("{:g} (beyond {:.2g}, where its square overflows f32)", value,
                     kLargestUsable);
}

void check_named(const std::vector<NamedTensor>& tensors, const std::string& kind,
                 const std::string& where) {
  for (const NamedTensor& t : tensors)
    if (const auto i = first_unusable(t.value))
      throw UnusableCheckpoint(fmt::format("{}: {} '{}' element {} is {}", where, kind, t.name, *i,
                              describe_value(value_at(t.value, *i))));
}

void check_centres(const Tensor& rows, std::int64_t class_start, const std::string& kind,
                   const std::string& where) {
  if (const auto i = first_unusable(rows)) {
    const std::int64_t columns = rows.dim(1);
    throw UnusableCheckpoint(fmt::format("{}: {} of class {} (element {}) is {}", where, kind,
                            class_start + *i / columns, *i % columns,
                            describe_value(value_at(rows, *i))));
  }
}

}  // namespace

void check_checkpoint_values(const Checkpoint& checkpoint, const std::string& where) {
  check_named(checkpoint.parameters, "backbone parameter", where);
  for (const NamedMoment& m : checkpoint.moments)
    check_named(m.tensors, fmt::format("{} of backbone parameter", m.name), where);
  check_named(checkpoint.buffers, "backbone buffer", where);
  const ClassShard& shard = checkpoint.shard;
  check_centres(shard.weight, shard.class_start, "the class centre", where);
  for (const NamedTensor& m : shard.moments)
    check_centres(m.value, shard.class_start, fmt::format("the {} of the class centre", m.name),
                  where);
  if (!std::isfinite(checkpoint.state.loss_scale) || checkpoint.state.loss_scale <= 0)
    throw UnusableCheckpoint(
        fmt::format("{}: the loss scale is {}", where, checkpoint.state.loss_scale));
}

}  // namespace pfc
