// Runs exported ONNX models with onnxruntime, as insightface's tools would: through a Python
// virtual environment under the build folder (python_venv.sh makes it once) and
// onnx_embed.py. For tests that compare onnxruntime's embeddings with pfc's or arcface_torch's.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace pfc::test {

// The environment's python, or "" when PyPI cannot be reached (the caller skips the test).
// Any other failure to make the environment throws.
std::string onnxruntime_python();

// images: host f32 [n, 3, s, s] NCHW, normalised -> host f32 [n, emb], run in batches of
// `batch` images (so that a dynamic batch dimension is exercised). Files go to `scratch`.
Tensor onnxruntime_embed(const std::string& python, const std::string& model_path,
                         const Tensor& images, const std::string& scratch,
                         std::int64_t batch = 64);

}  // namespace pfc::test
