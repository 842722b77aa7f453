// pfc's ONNX export against arcface_torch itself: tiny, r50, mbf (MobileFaceNet, from the
// parity file: grouped and depthwise convolutions, the GDC head) and vit_tiny (the Vision
// Transformer file: tokens, LayerNorm, attention, ReLU6) rebuilt from the golden fill rule,
// with the batch-norm running statistics of the golden case, exported and run by onnxruntime.
// Its embeddings must be arcface_torch's inference-mode embeddings (`eval_embeddings`, float64)
// within the golden tolerance: max(1e-4, 4 x arcface_torch's own fp32 error on them). Skipped
// only when PyPI cannot be reached for onnxruntime.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "app/golden_backbone.h"
#include "backend/cpu/cpu_backend.h"
#include "export/onnx_export.h"
#include "io/golden_file.h"
#include "support/gradient_checker.h"
#include "support/onnx_runtime.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCase = "arcface_sr1";

// Repeats the images `times` times along the batch, so that onnxruntime runs whole batches
// and a short last one.
Tensor repeated(const Tensor& images, std::int64_t times) {
  Shape shape = images.shape();
  shape[0] *= times;
  Tensor out = Tensor::host(shape, DType::f32);
  for (std::int64_t t = 0; t < times; ++t)
    std::copy_n(images.data<float>(), images.numel(), out.data<float>() + t * images.numel());
  return out;
}

class OnnxGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxGolden, OnnxruntimeComputesArcfaceTorchEvalEmbeddings) {
  const std::string python = test::onnxruntime_python();
  if (python.empty()) GTEST_SKIP() << "PyPI cannot be reached: no onnxruntime to run the model";
  const std::string group = GetParam();
  const GoldenFile file(group == "mbf"                ? test::parity_golden_path()
                        : group.starts_with("vit") ? test::vit_golden_path()
                                                   : test::golden_path());
  const GoldenNetwork network = file.network(group);
  CpuBackend backend;
  const auto model = golden_backbone(file, network, backend, DType::f32);
  for (Buffer* b : model->buffers()) {
    const auto stats = file.reference(group, kCase, "running_stats/" + b->name);
    ASSERT_TRUE(stats.has_value()) << b->name;
    backend.copy_cast(stats->values, b->value);
  }

  OnnxExportSource source;
  source.graph_name = "golden " + group;
  source.image_size = network.image_size;
  source.embedding_size = network.embedding_size;
  source.trace = [&](InferenceGraph& graph, GraphValue images) {
    return model->trace(graph, images);
  };
  const std::string scratch = test::scratch_dir("onnx_golden_" + group);
  const std::string path = scratch + "/" + group + ".onnx";
  write_onnx_model(build_onnx_model(source), path);

  const Tensor input = file.input(group);
  const std::int64_t times = 3;
  const Tensor embeddings = test::onnxruntime_embed(python, path, repeated(input, times), scratch,
                                                    /*batch=*/input.dim(0) + 1);
  const auto reference = file.reference(group, kCase, "eval_embeddings");
  ASSERT_TRUE(reference.has_value());
  ASSERT_TRUE(reference->torch.cpu.has_value());
  const double torch_error = *reference->torch.cpu;
  const double tolerance = std::max(1e-4, 4 * torch_error);
  const std::int64_t one = reference->values.numel();
  double worst = 0;
  for (std::int64_t t = 0; t < times; ++t) {
    Tensor copy = Tensor::host(reference->values.shape(), DType::f32);
    std::copy_n(embeddings.data<float>() + t * one, one, copy.data<float>());
    worst = std::max(worst, test::relative_l2(copy, reference->values));
  }
  std::printf("%s: onnxruntime vs arcface_torch's f64 eval_embeddings: rel. error %.2e "
              "(arcface_torch's fp32: %.2e; tolerance %.1e); model %.1f MB\n",
              group.c_str(), worst, torch_error, tolerance, fs::file_size(path) / 1e6);
  EXPECT_LE(worst, tolerance) << group;
  // 39 MB (tiny), 175 MB (r50), 8 MB (mbf), 3 MB (vit_tiny)
  if (!HasFailure()) fs::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Networks, OnnxGolden, ::testing::Values("tiny", "r50", "mbf", "vit_tiny"));

}  // namespace
}  // namespace pfc
