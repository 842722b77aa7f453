// MobileFaceNet on the GPU (cuDNN's grouped and depthwise convolutions, the f32 head outside
// the fp16 activations) against the same network on the CPU backend: one training pass from
// the same initial weights and images, embeddings and every gradient compared. f32 agrees to
// summation order through 50 batch-norms; f16 to f16 activations.
#include <string>

#include "gpu_test_support.h"
#include "model/mobilefacenet.h"

namespace pfc::test {
namespace {

class GpuMobileFaceNet : public ::testing::TestWithParam<DType> {};

INSTANTIATE_TEST_SUITE_P(Activations, GpuMobileFaceNet, ::testing::Values(DType::f32, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST_P(GpuMobileFaceNet, TrainingPassMatchesCpu) {
  PFC_REQUIRE_GPU();
  const DType activations = GetParam();
  const double tol = activations == DType::f16 ? 5e-2 : 1e-3;
  MobileFaceNetOptions gpu_options;
  gpu_options.precision = activations;
  MobileFaceNet on_gpu(gpu_backend(), gpu_options), on_cpu(cpu_backend(), {});
  on_gpu.initialize(11);
  on_cpu.initialize(11);

  const Tensor images = random_host({4, 112, 112, 3}, -1.0, 1.0, 12);
  const Tensor embeddings_grad = random_host({4, 512}, -0.01, 0.01, 13);
  const Tensor cpu_embeddings = on_cpu.forward(images, ForwardMode::training);
  const Tensor gpu_embeddings =
      on_gpu.forward(to_device(images, DType::f32), ForwardMode::training);
  EXPECT_EQ(gpu_embeddings.dtype(), DType::f32) << "the GDC head computes in f32";
  expect_close(to_host_f32(gpu_embeddings), cpu_embeddings, tol, "embeddings");

  on_cpu.backward(embeddings_grad);
  on_gpu.backward(to_device(embeddings_grad, DType::f32));
  const auto& cpu_params = on_cpu.parameters();
  for (std::size_t i = 0; i < cpu_params.size(); ++i) {
    const Parameter& want = *cpu_params[i];
    // The shift of a LinearBlock's batch-norm, whose output reaches the loss only through
    // another training-mode batch-norm, has a true gradient of 0: both sides hold rounding
    // noise, far below the gradient of the scale beside it (listed before it).
    const bool noise = want.name.ends_with(".bias") &&
                       cpu_backend().sum_of_squares(want.grad) <
                           1e-8 * cpu_backend().sum_of_squares(cpu_params[i - 1]->grad);
    if (noise) continue;
    expect_close(to_host_f32(on_gpu.parameters()[i]->grad), want.grad, tol, "grad " + want.name);
  }
  for (std::size_t i = 0; i < on_cpu.buffers().size(); ++i)
    expect_close(to_host_f32(on_gpu.buffers()[i]->value), on_cpu.buffers()[i]->value, tol,
                 on_cpu.buffers()[i]->name);
}

}  // namespace
}  // namespace pfc::test
