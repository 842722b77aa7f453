// The backbones' inference mode on the GPU against the CPU backend: the same small iresnet, or
// MobileFaceNet (same parameters and running statistics), embeds the same images, in f32 and
// in f16 activations, for a batch and for a single image.
#include <memory>

#include "gpu_test_support.h"
#include "model/iresnet.h"
#include "model/mobilefacenet.h"

namespace pfc::test {
namespace {

IResNetOptions small(DType activations) {
  IResNetOptions o;
  o.layers = {1, 1, 1, 1};
  o.widths = {16, 16, 32, 32};
  o.image_size = 32;
  o.embedding_size = 24;
  o.precision = activations;
  return o;
}

std::unique_ptr<Backbone> network(Backend& backend, bool mbf, DType activations) {
  if (!mbf) return std::make_unique<IResNet>(backend, small(activations));
  MobileFaceNetOptions o;
  o.precision = activations;
  return std::make_unique<MobileFaceNet>(backend, o);
}

// CPU and GPU twins: the CPU's initial parameters and random running statistics, copied.
void copy_state(Backbone& from, Backbone& to, CpuBackend& cpu) {
  std::uint64_t seed = 60;
  for (Buffer* b : from.buffers()) {
    const bool var = b->name.ends_with("running_var");
    Tensor v = random_host(b->value.shape(), var ? 0.5 : -0.2, var ? 1.5 : 0.2, ++seed);
    cpu.copy(v, b->value);
    to.import_buffer(b->name, v);
  }
  for (const Parameter* p : from.parameters())
    to.import_parameter(p->name, from.export_parameter(*p));
}

void expect_gpu_matches_cpu(DType activations, std::int64_t batch, double tol,
                            bool mbf = false) {
  CpuBackend& cpu = cpu_backend();
  const std::unique_ptr<Backbone> on_cpu = network(cpu, mbf, DType::f32);
  on_cpu->initialize(5);
  const std::unique_ptr<Backbone> on_gpu = network(gpu_backend(), mbf, activations);
  copy_state(*on_cpu, *on_gpu, cpu);
  const std::int64_t s = on_cpu->image_size();
  const Tensor images = random_host({batch, s, s, 3}, -1.0, 1.0, 70);
  const Tensor want = on_cpu->forward(images, ForwardMode::inference);
  const Tensor got =
      to_host_f32(on_gpu->forward(to_device(images, DType::f32), ForwardMode::inference));
  expect_close(got, want, tol, mbf ? "mbf inference embeddings" : "inference embeddings");
}

TEST(GpuInference, F32MatchesCpu) {
  PFC_REQUIRE_GPU();
  expect_gpu_matches_cpu(DType::f32, 6, 1e-4);
}

TEST(GpuInference, OneImageF32MatchesCpu) {
  PFC_REQUIRE_GPU();
  expect_gpu_matches_cpu(DType::f32, 1, 1e-4);
}

TEST(GpuInference, F16MatchesCpu) {
  PFC_REQUIRE_GPU();
  expect_gpu_matches_cpu(DType::f16, 6, 3e-2);
}

TEST(GpuInference, MobileFaceNetF32MatchesCpu) {
  PFC_REQUIRE_GPU();
  expect_gpu_matches_cpu(DType::f32, 3, 1e-4, /*mbf=*/true);
}

TEST(GpuInference, MobileFaceNetF16MatchesCpu) {
  PFC_REQUIRE_GPU();
  expect_gpu_matches_cpu(DType::f16, 3, 5e-2, /*mbf=*/true);
}

}  // namespace
}  // namespace pfc::test
