// What the primitives of a step cost, counted by the meta backend per primitive: floating-point
// operations on tensor cores (convolutions and GEMMs on f16 operands) and on the other units,
// and the bytes read and written if every operand moves through memory once (the least traffic
// a primitive can have). Doubles: a plan of any size sums without overflow, and counts below
// 2^53 (every test shape) are exact.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace pfc {

struct Work {
  double calls = 0;
  // f16 and bf16 convolutions and GEMMs (tensor cores, AVX512_BF16 or AMX; f32 accumulation)
  double tensor_flops = 0;
  double other_flops = 0;   // everything else: f32 GEMMs and convolutions, elementwise, norms
  double bytes_read = 0;
  double bytes_written = 0;

  Work& operator+=(const Work& other);
  Work& operator-=(const Work& other);
};

class ArithmeticTally {
 public:
  void add(std::string_view primitive, const Work& work);
  // Per primitive name ("conv2d_forward", "gemm", ...), in name order.
  const std::map<std::string, Work, std::less<>>& by_primitive() const { return by_primitive_; }
  Work total() const;
  // What was added since `earlier`, a copy of this tally taken then (one step: the tally after
  // it since the tally before it).
  ArithmeticTally since(const ArithmeticTally& earlier) const;

 private:
  std::map<std::string, Work, std::less<>> by_primitive_;
};

}  // namespace pfc
