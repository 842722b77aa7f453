// The whole classifier head on the GPU against the same head on the CPU backend: one rank
// (an EmulatedComm of one), the three methods, f32 and f16 GEMM operands, and pfc under both
// arcface_torch versions (sampled update and exact margin; dense update and straight-through
// margin) and at sample rate 0 (positives only). Same draw of
// centres and sampled classes on both, so loss, embedding gradient and the updated centres
// must agree to the GEMMs' summation order (and, in f16, the rare operand that rounds the
// other way after an f32 normalisation one ulp apart); the step is compared through the
// update it made.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "comm/emulated_comm.h"
#include "gpu_test_support.h"
#include "pfc/partial_fc.h"

namespace pfc::test {
namespace {

class GpuPartialFcHead : public ::testing::TestWithParam<DType> {};

INSTANTIATE_TEST_SUITE_P(GemmOperands, GpuPartialFcHead,
                         ::testing::Values(DType::f32, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST_P(GpuPartialFcHead, MatchesTheCpuHead) {
  PFC_REQUIRE_GPU();
  const std::int64_t batch = 24, emb = 64, classes = 3001;
  const double tol = GetParam() == DType::f16 ? 1e-3 : 1e-4;
  const Tensor embeddings = random_host({batch, emb}, -1.0, 1.0, 41);
  std::vector<std::int64_t> label_values;
  for (std::int64_t i = 0; i < batch; ++i) label_values.push_back((i * 977) % classes);
  const Tensor labels = host_index(label_values);

  struct Variant {
    PfcMethod method;
    double sample_rate;
    ClassifierUpdate update;
    MarginGradient margin;
  };
  const Variant variants[] = {
      {PfcMethod::dp, 1.0, ClassifierUpdate::sampled, MarginGradient::straight_through},
      {PfcMethod::mp, 1.0, ClassifierUpdate::sampled, MarginGradient::exact},
      {PfcMethod::pfc, 0.2, ClassifierUpdate::sampled, MarginGradient::exact},
      {PfcMethod::pfc, 0.2, ClassifierUpdate::dense, MarginGradient::straight_through},
      {PfcMethod::pfc, 0.0, ClassifierUpdate::dense, MarginGradient::exact}};
  for (const Variant& v : variants) {
    const std::string what =
        fmt::format("{} {} {} {}", pfc_method_name(v.method), v.sample_rate,
                    classifier_update_name(v.update), margin_gradient_name(v.margin));
    PartialFcOptions o;
    o.num_classes = classes;
    o.embedding_size = emb;
    o.sample_rate = v.sample_rate;
    o.margin = MarginParams{1.0, 0.5, 0.0, 64.0};
    o.method = v.method;
    o.seed = 5;
    o.gemm_operands = GetParam();
    o.classifier_update = v.update;
    o.margin_gradient = v.margin;
    Backend& gpu = gpu_backend();
    CpuBackend& cpu = cpu_backend();
    EmulatedComm gpu_comm(1, 0, 100.0, 1.0, gpu), cpu_comm(1, 0, 100.0, 1.0, cpu);
    PartialFc on_gpu(gpu, gpu_comm, o), on_cpu(cpu, cpu_comm, o);

    Tensor gpu_grad, cpu_grad;
    const Tensor device_embeddings = to_device(embeddings, DType::f32);
    const double gpu_loss = on_gpu.forward_backward(device_embeddings, labels, gpu_grad, 3);
    const double cpu_loss = on_cpu.forward_backward(embeddings, labels, cpu_grad, 3);
    EXPECT_NEAR(gpu_loss, cpu_loss, tol * cpu_loss) << what;
    EXPECT_EQ(on_gpu.sampled_index(), on_cpu.sampled_index()) << what;
    expect_close(to_host_f32(gpu_grad), cpu_grad, tol, what + " embeddings_grad");

    // The step is checked through what it changed, the update (centres after minus before)
    // and the momentum, relative to their own size: compared as whole centres (~0.01 each,
    // the update far smaller) they would be held to f32 rounding. In f16 one GEMM operand
    // that rounds the other way (the GPU and the CPU normalise in different precisions, one
    // f32 ulp apart) moves a row's gradient, and so its update, by up to one f16 spacing of
    // that operand, 2^-10 of it at most (~6e-4 seen): 2e-3 allows for two such flips.
    const double step_tol = GetParam() == DType::f16 ? 2e-3 : tol;
    const Tensor gpu_before = to_host_f32(on_gpu.weight());
    const Tensor cpu_before = clone_host(on_cpu.weight());
    on_gpu.step(0.1);
    on_cpu.step(0.1);
    expect_close(difference(to_host_f32(on_gpu.weight()), gpu_before),
                 difference(on_cpu.weight(), cpu_before), step_tol, what + " centres' update");
    expect_close(to_host_f32(on_gpu.optimizer_state().moments[0]),
                 on_cpu.optimizer_state().moments[0], step_tol, what + " momentum");
  }
}

}  // namespace
}  // namespace pfc::test
