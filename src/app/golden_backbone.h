// The backbone half of `pfc golden`: the file's network (an iresnet, MobileFaceNet or ViT)
// rebuilt from its fill rule, forward on the stored input, backward from the stored
// embeddings_grad, then the inference forward, compared tensor by tensor.
#pragma once

#include <memory>

#include "app/golden_table.h"
#include "backend/backend.h"
#include "io/golden_file.h"
#include "model/backbone.h"

namespace pfc {

// The file's network, built as the trainer builds it (make_backbone), with every trained
// parameter by the fill rule (a trained parameter the file does not list is an error);
// buffers as initialised (running mean 0, variance 1). activations, here and below: f32, f16
// (the CUDA backend's fp16 mode) or f64 (an f64 run: everything f64).
std::unique_ptr<Backbone> golden_backbone(const GoldenFile& file, const GoldenNetwork& network,
                                          Backend& backend, DType activations);

void check_golden_backbone(const GoldenFile& file, const GoldenNetwork& network,
                           const GoldenCase& golden_case, Backend& backend,
                           DType activations, GoldenTable& table);

// A host f64 copy of t (any device, f16, f32 or f64), the type every comparison reads.
Tensor to_host_f64(Backend& backend, const Tensor& t);

// Compares `ours` (host f64, PyTorch layout) with a reference that may hold every
// `stride`-th element only. A positive `scale` replaces the reference's L2 as the denominator.
void compare_reference(GoldenTable& table, const std::string& name, const Tensor& ours,
                       const GoldenReference& ref, double scale = 0);

// NCHW host f32 -> NHWC host f32 (the golden input's layout to ours).
Tensor nchw_to_nhwc(const Tensor& nchw);

// A golden input [batch, 3, s, s] (NCHW, host) as the images the backbone takes: NHWC f32 on
// the backend's device.
Tensor golden_images(Backend& backend, const Tensor& nchw);

}  // namespace pfc
