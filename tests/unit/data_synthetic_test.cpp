// SyntheticDataSource: one normalised random image built once, constant or uniform labels,
// and positions that behave like a real dataset's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "config/config.h"
#include "core/error.h"
#include "data/synthetic_data_source.h"

namespace pfc {
namespace {

SyntheticSourceOptions options(SyntheticLabels labels, std::int64_t batch = 8) {
  SyntheticSourceOptions o;
  o.batch_size = batch;
  o.image_size = 112;
  o.num_classes = 10;
  o.num_image = 100;
  o.seed = 3;
  o.labels = labels;
  return o;
}

TEST(DataSynthetic, EveryImageIsTheSameNormalisedRandomImage) {
  SyntheticDataSource source(options(SyntheticLabels::constant), 0, 1, host_allocator());
  Batch batch;
  source.next(batch);
  ASSERT_EQ(batch.images.shape(), (Shape{8, 112, 112, 3}));
  const float* images = batch.images.data<float>();
  const std::int64_t per_image = 112 * 112 * 3;
  std::set<int> pixel_values;
  for (std::int64_t i = 0; i < per_image; ++i) {
    const float v = images[i];
    ASSERT_GE(v, -1.0f);
    ASSERT_LE(v, 1.0f);
    const float pixel = (v * 0.5f + 0.5f) * 255.0f;
    ASSERT_NEAR(pixel, std::round(pixel), 1e-3);  // an integer pixel, normalised
    pixel_values.insert(static_cast<int>(std::round(pixel)));
  }
  EXPECT_GT(pixel_values.size(), 250u);
  EXPECT_EQ(*pixel_values.rbegin(), 254);  // torch.randint(0, 255): 255 never drawn
  for (std::int64_t b = 1; b < 8; ++b)
    ASSERT_EQ(std::memcmp(images, images + b * per_image, per_image * sizeof(float)), 0);
  for (std::int64_t i = 0; i < 8; ++i) EXPECT_EQ(batch.labels.data<std::int64_t>()[i], 1);

  SyntheticDataSource same(options(SyntheticLabels::constant), 0, 1, host_allocator());
  Batch other;
  same.next(other);
  EXPECT_EQ(std::memcmp(images, other.images.data<float>(), per_image * sizeof(float)), 0);
  auto reseeded = options(SyntheticLabels::constant);
  reseeded.seed = 4;
  SyntheticDataSource different(reseeded, 0, 1, host_allocator());
  different.next(other);
  EXPECT_NE(std::memcmp(images, other.images.data<float>(), per_image * sizeof(float)), 0);
}

TEST(DataSynthetic, UniformLabelsCoverAllClassesAndSplitAcrossRanks) {
  SyntheticDataSource r0(options(SyntheticLabels::uniform), 0, 2, host_allocator());
  SyntheticDataSource r1(options(SyntheticLabels::uniform), 1, 2, host_allocator());
  EXPECT_EQ(r0.batches_per_epoch(), 6);  // 100 / 16
  std::set<std::int64_t> seen;
  Batch a;
  Batch b;
  for (int step = 0; step < 6; ++step) {
    r0.next(a);
    r1.next(b);
    for (std::int64_t i = 0; i < 8; ++i) {
      const std::int64_t la = a.labels.data<std::int64_t>()[i];
      const std::int64_t lb = b.labels.data<std::int64_t>()[i];
      ASSERT_GE(la, 0);
      ASSERT_LT(la, 10);
      EXPECT_EQ(la, r0.label(0, step * 16 + i));
      EXPECT_EQ(lb, r0.label(0, step * 16 + 8 + i));
      seen.insert(la);
      seen.insert(lb);
    }
  }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(r0.position(), (DataPosition{0, 96}));
  r0.next(a);
  EXPECT_EQ(r0.position(), (DataPosition{1, 16}));
  std::vector<std::int64_t> epoch0;
  std::vector<std::int64_t> epoch1;
  for (std::int64_t i = 0; i < 20; ++i) {
    epoch0.push_back(r0.label(0, i));
    epoch1.push_back(r0.label(1, i));
  }
  EXPECT_NE(epoch0, epoch1);  // labels are drawn per (epoch, index)
}

TEST(DataSynthetic, SeekOnFewerRanksContinuesTheSameLabels) {
  SyntheticDataSource r0(options(SyntheticLabels::uniform), 0, 2, host_allocator());
  SyntheticDataSource r1(options(SyntheticLabels::uniform), 1, 2, host_allocator());
  Batch a;
  Batch b;
  for (int step = 0; step < 4; ++step) {
    r0.next(a);
    r1.next(b);
  }
  const DataPosition saved = r0.position();
  r0.next(a);
  r1.next(b);
  std::vector<std::int64_t> want(a.labels.data<std::int64_t>(), a.labels.data<std::int64_t>() + 8);
  want.insert(want.end(), b.labels.data<std::int64_t>(), b.labels.data<std::int64_t>() + 8);

  SyntheticDataSource single(options(SyntheticLabels::uniform, 16), 0, 1, host_allocator());
  single.seek(saved);
  single.next(a);
  EXPECT_EQ(std::vector<std::int64_t>(a.labels.data<std::int64_t>(),
                                      a.labels.data<std::int64_t>() + 16),
            want);
  EXPECT_THROW(single.seek({0, 101}), Error);
}

TEST(DataSynthetic, MadeFromTheConfig) {
  Config cfg;
  cfg.rec = "synthetic";
  cfg.batch_size = 4;
  cfg.num_classes = 1000;
  cfg.num_image = 1000000;
  auto source = make_data_source(cfg, 1, 4);
  EXPECT_EQ(source->batches_per_epoch(), 1000000 / 16);
  Batch batch;
  source->next(batch);
  EXPECT_EQ(batch.labels.data<std::int64_t>()[3], 1);
  EXPECT_EQ(source->skipped_records(), 0);
  EXPECT_TRUE(source->constant_images()) << "the trainer copies them to the device once";

  cfg.synthetic_labels = "zipf";
  EXPECT_THROW(make_data_source(cfg, 0, 1), UsageError);
  cfg.synthetic_labels = "constant";
  cfg.num_classes = 1;
  EXPECT_THROW(make_data_source(cfg, 0, 1), UsageError);
}

}  // namespace
}  // namespace pfc
