#include "backend/meta/arithmetic_tally.h"

namespace pfc {

Work& Work::operator+=(const Work& other) {
  calls += other.calls;
  tensor_flops += other.tensor_flops;
  other_flops += other.other_flops;
  bytes_read += other.bytes_read;
  bytes_written += other.bytes_written;
  return *this;
}

Work& Work::operator-=(const Work& other) {
  calls -= other.calls;
  tensor_flops -= other.tensor_flops;
  other_flops -= other.other_flops;
  bytes_read -= other.bytes_read;
  bytes_written -= other.bytes_written;
  return *this;
}

void ArithmeticTally::add(std::string_view primitive, const Work& work) {
  auto it = by_primitive_.find(primitive);
  if (it == by_primitive_.end()) it = by_primitive_.emplace(std::string(primitive), Work{}).first;
  it->second += work;
}

Work ArithmeticTally::total() const {
  Work sum;
  for (const auto& [name, work] : by_primitive_) sum += work;
  return sum;
}

ArithmeticTally ArithmeticTally::since(const ArithmeticTally& earlier) const {
  ArithmeticTally delta;
  for (const auto& [name, work] : by_primitive_) {
    Work d = work;
    if (const auto it = earlier.by_primitive_.find(name); it != earlier.by_primitive_.end())
      d -= it->second;
    if (d.calls > 0) delta.by_primitive_.emplace(name, d);
  }
  return delta;
}

}  // namespace pfc
