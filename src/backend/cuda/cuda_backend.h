// The CUDA backend: cuDNN convolutions (NHWC, tensor cores, plans cached per shape),
// cuBLAS(Lt) GEMMs and our own kernels for everything else. Activations may be f16 or f32;
// parameters, statistics and every reduction stay f32.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace pfc {

int cuda_visible_device_count();
std::unique_ptr<Backend> make_cuda_backend(int device_ordinal);

}  // namespace pfc
