// The backbones in inference mode (PyTorch's model.eval()): arcface_torch's own eval_embeddings
// of the golden files (tiny, r50 and mbf, after the one training forward that set the running
// statistics), batch-size independence, one image at a time, nothing kept for a backward and
// the running statistics untouched, for a small iresnet and for MobileFaceNet.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "app/golden_backbone.h"
#include "backend/cpu/cpu_backend.h"
#include "io/golden_file.h"
#include "model/iresnet.h"
#include "model/mobilefacenet.h"
#include "support/gradient_checker.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

struct GoldenRun {
  double error = 0;      // L2 relative error of our eval embeddings against arcface_torch's
  double tolerance = 0;  // the golden rule for this activation type
};

// The golden problem: parameters by the fill rule, one training forward on the stored input
// (running statistics from 0 and 1), then the inference forward of the same input.
GoldenRun run_golden(const std::string& group, DType activations) {
  const GoldenFile file(group == "mbf" ? test::parity_golden_path() : test::golden_path());
  const GoldenNetwork network = file.network(group);
  CpuBackend backend;
  const std::unique_ptr<Backbone> model = golden_backbone(file, network, backend, activations);
  const Tensor images = nchw_to_nhwc(file.input(group));
  model->forward(images, ForwardMode::training);
  const Tensor ours = backend.to_host(model->forward(images, ForwardMode::inference));
  const auto reference = file.reference(group, "arcface_sr1", "eval_embeddings");
  EXPECT_TRUE(reference.has_value()) << group << " has no eval_embeddings";
  if (!reference) return {};
  const double torch_error = h5::read_attribute_double(
      file.file_id(), group + "/arcface_sr1/eval_embeddings", "torch_cpu_fp32_rel_err");
  GoldenRun run;
  run.error = test::relative_l2(ours, reference->values);
  // The golden rule: an f64 run (running statistics f64 too) within 1e-10 of exact; fp32
  // within max(1e-4, 4 x arcface_torch's own fp32 error).
  run.tolerance = activations == DType::f64 ? 1e-10 : std::max(1e-4, 4 * torch_error);
  return run;
}

struct EvalCase {
  const char* name;
  const char* group;
  DType activations;
};

class ModelInferenceGolden : public ::testing::TestWithParam<EvalCase> {};

TEST_P(ModelInferenceGolden, MatchesArcfaceTorchEval) {
  const GoldenRun run = run_golden(GetParam().group, GetParam().activations);
  EXPECT_LE(run.error, run.tolerance);
  RecordProperty("relative_error", fmt::format("{:.2e}", run.error));
}

INSTANTIATE_TEST_SUITE_P(Networks, ModelInferenceGolden,
                         ::testing::Values(EvalCase{"tiny_f32", "tiny", DType::f32},
                                           EvalCase{"tiny_f64", "tiny", DType::f64},
                                           EvalCase{"r50_f32", "r50", DType::f32},
                                           EvalCase{"mbf_f32", "mbf", DType::f32},
                                           EvalCase{"mbf_f64", "mbf", DType::f64}),
                         [](const auto& info) { return std::string(info.param.name); });

// A small iresnet (32x32 images), or get_mbf (112x112).
std::unique_ptr<Backbone> small_network(Backend& backend, const std::string& which) {
  if (which == "mbf") return std::make_unique<MobileFaceNet>(backend, MobileFaceNetOptions{});
  IResNetOptions o;
  o.layers = {1, 1, 1, 1};
  o.widths = {8, 8, 16, 16};
  o.image_size = 32;
  o.embedding_size = 12;
  return std::make_unique<IResNet>(backend, o);
}

Tensor random_images(const Backbone& model, std::int64_t n, std::uint64_t seed) {
  const std::int64_t s = model.image_size();
  return test::random_uniform({n, s, s, 3}, DType::f32, seed);
}

// Random running statistics, as a trained network has.
void randomise_buffers(Backbone& model, Backend& backend) {
  std::uint64_t seed = 100;
  for (Buffer* b : model.buffers()) {
    const bool var = b->name.ends_with("running_var");
    const Tensor v = test::random_uniform(b->value.shape(), DType::f32, ++seed,
                                          var ? 0.5 : -0.3, var ? 2.0 : 0.3);
    backend.copy(v, b->value);
  }
}

class ModelInferenceOf : public ::testing::TestWithParam<const char*> {};

TEST_P(ModelInferenceOf, EachImageAloneGivesItsBatchedEmbedding) {
  CpuBackend backend;
  const std::unique_ptr<Backbone> network = small_network(backend, GetParam());
  Backbone& model = *network;
  model.initialize(7);
  randomise_buffers(model, backend);
  const Tensor images = random_images(model, 5, 8);
  const Tensor batched = backend.to_host(model.forward(images, ForwardMode::inference));
  for (std::int64_t i = 0; i < 5; ++i) {
    const Tensor alone = backend.to_host(model.forward(images.rows(i, i + 1),
                                                       ForwardMode::inference));
    test::expect_tensors_near(alone, batched.rows(i, i + 1), 1e-5, 1e-6,
                              "image " + std::to_string(i) + " alone");
  }
}

TEST_P(ModelInferenceOf, KeepsNothingAndLeavesRunningStatisticsAlone) {
  CpuBackend backend;
  const std::unique_ptr<Backbone> network = small_network(backend, GetParam());
  Backbone& model = *network;
  model.initialize(9);
  randomise_buffers(model, backend);
  std::vector<Tensor> before;
  for (const Buffer* b : model.buffers()) before.push_back(backend.to_host(b->value));
  const Tensor images = random_images(model, 3, 10);
  model.forward(images, ForwardMode::inference);  // anything a first call sets up stays
  const MemoryLedger& ledger = backend.allocator().ledger();
  const std::int64_t in_use = ledger.snapshot().total_in_use;
  {
    const Tensor embeddings = model.forward(images, ForwardMode::inference);
    EXPECT_EQ(ledger.snapshot().total_in_use - in_use,
              static_cast<std::int64_t>(embeddings.bytes()))
        << "an inference forward kept activations beyond its result";
  }
  for (std::size_t i = 0; i < before.size(); ++i)
    test::expect_tensors_near(backend.to_host(model.buffers()[i]->value), before[i], 0, 0,
                              model.buffers()[i]->name);
}

TEST_P(ModelInferenceOf, DiffersFromTrainingModeByTheStatistics) {
  // A guard that the mode reaches every batch-norm: with running statistics far from the
  // batch's, the two modes must disagree.
  CpuBackend backend;
  const std::unique_ptr<Backbone> network = small_network(backend, GetParam());
  Backbone& model = *network;
  model.initialize(11);
  randomise_buffers(model, backend);
  const Tensor images = random_images(model, 4, 12);
  const Tensor eval = backend.to_host(model.forward(images, ForwardMode::inference));
  const Tensor train = backend.to_host(model.forward(images, ForwardMode::training));
  EXPECT_GT(test::relative_l2(train, eval), 1e-2);
}

INSTANTIATE_TEST_SUITE_P(Networks, ModelInferenceOf, ::testing::Values("iresnet", "mbf"));

}  // namespace
}  // namespace pfc
