// vit_t on the GPU (cuDNN's patch convolution, cuBLAS's strided-batched attention GEMMs, the
// LayerNorm, softmax and ReLU6 kernels, masking's row gathers, DropPath; the f32 head and
// attention beside f16 activations) against the same network on the CPU backend: one training
// pass from the same initial weights, images and draws (masking and DropPath keyed by the same
// step and samples), embeddings and every gradient compared. f32 agrees to summation order;
// f16 to f16 activations.
#include <string>

#include "gpu_test_support.h"
#include "model/vision_transformer.h"

namespace pfc::test {
namespace {

class GpuVisionTransformer : public ::testing::TestWithParam<DType> {};

INSTANTIATE_TEST_SUITE_P(Activations, GpuVisionTransformer,
                         ::testing::Values(DType::f32, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST_P(GpuVisionTransformer, TrainingPassMatchesCpu) {
  PFC_REQUIRE_GPU();
  const DType activations = GetParam();
  const double tol = activations == DType::f16 ? 5e-2 : 1e-3;
  VisionTransformerOptions gpu_options;  // vit_t: masking and DropPath on
  gpu_options.precision = activations;
  VisionTransformer on_gpu(gpu_backend(), gpu_options), on_cpu(cpu_backend(), {});
  on_gpu.initialize(21);
  on_cpu.initialize(21);
  const DrawPosition at{/*seed=*/5, /*step=*/3, /*first_sample=*/0};
  on_gpu.set_draw_position(at);
  on_cpu.set_draw_position(at);

  const Tensor images = random_host({4, 112, 112, 3}, -1.0, 1.0, 22);
  const Tensor embeddings_grad = random_host({4, 512}, -0.01, 0.01, 23);
  const Tensor cpu_embeddings = on_cpu.forward(images, ForwardMode::training);
  const Tensor gpu_embeddings =
      on_gpu.forward(to_device(images, DType::f32), ForwardMode::training);
  EXPECT_EQ(gpu_embeddings.dtype(), DType::f32) << "the feature head computes in f32";
  expect_close(to_host_f32(gpu_embeddings), cpu_embeddings, tol, "embeddings");

  on_cpu.backward(embeddings_grad);
  on_gpu.backward(to_device(embeddings_grad, DType::f32));
  const auto& cpu_params = on_cpu.parameters();
  for (std::size_t i = 0; i < cpu_params.size(); ++i)
    expect_close(to_host_f32(on_gpu.parameters()[i]->grad), cpu_params[i]->grad, tol,
                 "grad " + cpu_params[i]->name);
  for (std::size_t i = 0; i < on_cpu.buffers().size(); ++i)
    expect_close(to_host_f32(on_gpu.buffers()[i]->value), on_cpu.buffers()[i]->value, tol,
                 on_cpu.buffers()[i]->name);
}

}  // namespace
}  // namespace pfc::test
