// Element-type conversion of host tensors between f16, bf16, f32 and f64, as the CPU backend's
// cast and Backend::copy_cast on the host side of a transfer do it: through double, and f16 and
// bf16 from double via float (as c10::Half(double) does), rounded to nearest even.
#pragma once

#include "core/tensor.h"

namespace pfc {

// dst = src converted to dst's type; both host tensors with the same element count.
void host_cast(const Tensor& src, Tensor& dst);

}  // namespace pfc
