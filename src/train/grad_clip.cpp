#include "train/grad_clip.h"

#include <cmath>

namespace pfc {

double global_l2_norm(Backend& backend, std::span<const Tensor> tensors) {
  double sum = 0.0;
  for (const Tensor& t : tensors) sum += backend.sum_of_squares(t);
  return std::sqrt(sum);
}

double clip_grad_norm(Backend& backend, std::span<Tensor> grads, double max_norm) {
  const double norm = global_l2_norm(backend, grads);
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0)
    for (Tensor& g : grads) backend.scale(g, coef);
  return norm;
}

}  // namespace pfc
