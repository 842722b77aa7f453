// embed_images: batch by batch through a backbone in inference mode, in order, with mirror
// images when asked; the same embeddings as one forward of all the images.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "eval/embedding_extractor.h"
#include "model/iresnet.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

constexpr std::int64_t kSize = 32;
constexpr std::int64_t kPixels = kSize * kSize * 3;

// Images held in memory, as decoded ones would be.
class MemoryImages final : public ImageSource {
 public:
  explicit MemoryImages(const Tensor& images) : images_(images) {}
  std::int64_t size() const override { return images_.dim(0); }
  void decode(std::int64_t i, float* out) override {
    const float* src = images_.data<float>() + i * kPixels;
    std::copy(src, src + kPixels, out);
    ++decoded;
  }
  std::string describe(std::int64_t i) const override { return std::to_string(i); }
  int decoded = 0;

 private:
  Tensor images_;
};

std::unique_ptr<IResNet> small_network(Backend& backend) {
  IResNetOptions o;
  o.layers = {1, 1, 1, 1};
  o.widths = {8, 8, 16, 16};
  o.image_size = kSize;
  o.embedding_size = 10;
  auto model = std::make_unique<IResNet>(backend, o);
  model->initialize(3);
  return model;
}

TEST(EmbeddingExtractor, MirrorImageReversesEachRow) {
  const Tensor image = test::random_uniform({kSize, kSize, 3}, DType::f32, 1);
  std::vector<float> out(kPixels);
  mirror_image(image.data<float>(), kSize, out.data());
  for (std::int64_t y = 0; y < kSize; ++y)
    for (std::int64_t x = 0; x < kSize; ++x)
      for (std::int64_t c = 0; c < 3; ++c)
        ASSERT_EQ(out[(y * kSize + x) * 3 + c],
                  image.data<float>()[(y * kSize + kSize - 1 - x) * 3 + c]);
}

TEST(BatchRanges, CoverEveryImageOnce) {
  const auto ranges = batch_ranges(10, 4);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[2].begin, 8);
  EXPECT_EQ(ranges[2].end, 10);
  EXPECT_TRUE(batch_ranges(0, 4).empty());
}

TEST(EmbeddingExtractor, BatchesGiveTheEmbeddingsOfOneForward) {
  CpuBackend backend;
  const auto model = small_network(backend);
  const std::int64_t n = 7;
  const Tensor images = test::random_uniform({n, kSize, kSize, 3}, DType::f32, 2);
  Tensor mirrored_images = Tensor::host(images.shape(), DType::f32);
  for (std::int64_t i = 0; i < n; ++i)
    mirror_image(images.data<float>() + i * kPixels, kSize,
                 mirrored_images.data<float>() + i * kPixels);
  const Tensor all = backend.to_host(model->forward(images, ForwardMode::inference));
  const Tensor all_mirrored =
      backend.to_host(model->forward(mirrored_images, ForwardMode::inference));

  MemoryImages source(images);
  Tensor got = Tensor::host({n, 10}, DType::f32), got_mirrored = Tensor::host({n, 10}, DType::f32);
  std::vector<std::int64_t> order;
  embed_images(*model, source, batch_ranges(n, 3), true,
               [&](const ImageRange& r, const Tensor& e, const Tensor& m) {
                 order.push_back(r.begin);
                 Tensor rows = got.rows(r.begin, r.end), mrows = got_mirrored.rows(r.begin, r.end);
                 backend.copy(e, rows);
                 backend.copy(m, mrows);
               });
  EXPECT_EQ(order, (std::vector<std::int64_t>{0, 3, 6}));
  EXPECT_EQ(source.decoded, n) << "one decode per image, mirror images included";
  test::expect_tensors_near(got, all, 1e-5, 1e-6, "embeddings");
  test::expect_tensors_near(got_mirrored, all_mirrored, 1e-5, 1e-6, "mirrored embeddings");
}

TEST(EmbeddingExtractor, WithoutMirrorImagesTheSecondIsUndefined) {
  CpuBackend backend;
  const auto model = small_network(backend);
  MemoryImages source(test::random_uniform({2, kSize, kSize, 3}, DType::f32, 4));
  int calls = 0;
  embed_images(*model, source, batch_ranges(2, 5), false,
               [&](const ImageRange& r, const Tensor& e, const Tensor& m) {
                 ++calls;
                 EXPECT_EQ(r.size(), 2);
                 EXPECT_EQ(e.shape(), (Shape{2, 10}));
                 EXPECT_FALSE(m.defined());
               });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace pfc
