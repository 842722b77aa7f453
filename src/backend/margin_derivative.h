// The derivative of arcface_torch's combined margin with respect to the target's cosine, the
// factor the seed's losses.py carries into the gradient by differentiating its acos and cos
// (today's applies the margin under no_grad: a factor of 1). One function for the CPU backend
// and the CUDA kernels, so that both compute literally the same thing, in f64.
#pragma once

#include <math.h>

#include "core/host_device.h"

namespace pfc {

// d/dc cos(m1 * acos(c) + m2) for c in [-1, 1]: m1 * sin(m1 * theta + m2) / sin(theta), theta =
// acos(c). CosFace and no margin (m1 = 1, m2 = 0) never take the acos: 1. sin(theta) is taken
// as sqrt((1 - c)(1 + c)), which keeps its precision near c = +-1 where 1 - c * c cancels.
// Beyond theta + m2 = pi (ArcFace has no threshold there in the seed) the factor turns
// negative; at c = +-1 it is infinite (NaN when m2 = 0 and m1 != 1), as the seed's gradient is
// not finite there either.
PFC_HOST_DEVICE double margin_derivative(double c, double m1, double m2) {
  if (m1 == 1.0 && m2 == 0.0) return 1.0;
  return m1 * sin(m1 * acos(c) + m2) / sqrt((1.0 - c) * (1.0 + c));
}

}  // namespace pfc
