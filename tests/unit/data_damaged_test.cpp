// A dataset with damaged records: a record cut off by the end of the file, a record whose
// header lost its magic, a JPEG that is not one, a truncated JPEG, an image of the wrong
// size and a label out of range. Reading goes on with full batches of good samples; each
// damaged record is counted once and logged with its key. A record that carries another id
// than its key is not damage (MXFaceDataset never reads the id). Damage beyond a small share
// of the dataset stops the run with a message, and a dataset whose probed records are all
// damaged is refused when it is opened.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <map>
#include <set>
#include <sstream>

#include "config/config.h"
#include "data/data_source.h"
#include "data/image_record.h"
#include "data/recordio.h"
#include "data/recordio_data_source.h"
#include "core/error.h"
#include "support/face_images.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

constexpr int kClasses = 3;
constexpr int kImages = 12;  // keys 1..12, label (key - 1) / 4

// Keys and what is wrong with them (kOtherId: nothing).
constexpr std::int64_t kOtherId = 2;
constexpr std::int64_t kBadLabel = 3;
constexpr std::int64_t kNotJpeg = 5;
constexpr std::int64_t kBadMagic = 6;
constexpr std::int64_t kWrongSize = 8;
constexpr std::int64_t kTruncatedJpeg = 10;
constexpr std::int64_t kCutByEof = 11;  // written last, then the file is cut inside it
const std::set<std::int64_t> kDamaged = {kBadLabel, kNotJpeg, kBadMagic, kWrongSize,
                                         kTruncatedJpeg, kCutByEof};

std::vector<std::uint8_t> jpeg_for(std::int64_t key) {
  const int size = key == kWrongSize ? 96 : 112;
  auto jpeg = test::encode_jpeg(test::face_rgb(static_cast<int>(key), 0, size), size, size, 95);
  if (key == kNotJpeg) jpeg[0] = jpeg[1] = 0x00;
  if (key == kTruncatedJpeg) jpeg.resize(jpeg.size() / 2);
  return jpeg;
}

std::string write_damaged_dataset(const std::string& dir) {
  {
    RecordIOWriter writer(dir + "/train.rec", dir + "/train.idx");
    ImageRecordHeader header;
    header.labels = {kImages + 1, kImages + 1 + kClasses};
    writer.write(0, make_image_record(header, {}));
    std::vector<std::int64_t> keys;
    for (std::int64_t key = 1; key <= kImages; ++key)
      if (key != kCutByEof) keys.push_back(key);
    keys.push_back(kCutByEof);
    for (std::int64_t key : keys) {
      ImageRecordHeader image;
      image.label = key == kBadLabel ? 7.0f : static_cast<float>((key - 1) / 4);
      image.id = static_cast<std::uint64_t>(key == kOtherId ? 99 : key);
      writer.write(key, make_image_record(image, jpeg_for(key)));
    }
    writer.close();
  }
  const RecordIOIndex index = RecordIOIndex::load(dir + "/train.idx");
  auto rec = test::read_file(dir + "/train.rec");
  rec[static_cast<std::size_t>(index.find(kBadMagic))] ^= 0xFF;
  rec.resize(static_cast<std::size_t>(index.find(kCutByEof)) + 100);
  test::write_file(dir + "/train.rec", rec);
  return dir;
}

TEST(DataDamaged, DamagedRecordsAreSkippedCountedAndLogged) {
  const std::string dir = write_damaged_dataset(test::scratch_dir("data_damaged"));
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "damaged_test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));

  Config cfg;
  cfg.rec = dir;
  cfg.num_classes = kClasses;
  cfg.num_image = kImages;
  cfg.batch_size = 4;
  cfg.data_workers = 2;
  auto source = make_data_source(cfg, 0, 1);
  EXPECT_EQ(source->batches_per_epoch(), 3);

  // The good images, as the source would deliver them unflipped, to recognise each sample.
  std::map<std::int64_t, std::vector<std::uint8_t>> good;
  for (std::int64_t key = 1; key <= kImages; ++key)
    if (!kDamaged.count(key)) {
      int w = 0;
      int h = 0;
      good[key] = test::decode_jpeg_rgb(jpeg_for(key), w, h);
    }
  auto identify = [&](const float* image) -> std::int64_t {
    for (const auto& [key, rgb] : good)
      for (bool flip : {false, true}) {
        bool same = true;
        for (int y = 0; y < 112 && same; ++y)
          for (int x = 0; x < 112 && same; ++x)
            for (int c = 0; c < 3 && same; ++c) {
              const int sx = flip ? 111 - x : x;
              const float want =
                  (static_cast<float>(rgb[(y * 112 + sx) * 3 + c]) / 255.0f - 0.5f) / 0.5f;
              same = image[(y * 112 + x) * 3 + c] == want;
            }
        if (same) return key;
      }
    return -1;
  };

  Batch batch;
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (int step = 0; step < 3; ++step) {
      source->next(batch);
      for (int i = 0; i < 4; ++i) {
        const std::int64_t key = identify(batch.images.data<float>() + i * 112 * 112 * 3);
        ASSERT_NE(key, -1) << "epoch " << epoch << " step " << step << " sample " << i;
        EXPECT_EQ(batch.labels.data<std::int64_t>()[i], (key - 1) / 4);
      }
    }
    EXPECT_EQ(source->skipped_records(), static_cast<std::int64_t>(kDamaged.size()));
  }
  source.reset();  // its threads log through the default logger: stop them before swapping
  spdlog::set_default_logger(previous);
  const std::string text = log.str();
  for (std::int64_t key : kDamaged)
    EXPECT_NE(text.find(fmt::format("key {} of", key)), std::string::npos)
        << "no warning for key " << key << " in:\n" << text;
  EXPECT_NE(text.find("label 7 is not a class in [0, 3)"), std::string::npos) << text;
  EXPECT_NE(text.find("image is 96x96"), std::string::npos) << text;
  EXPECT_NE(text.find("no RecordIO magic"), std::string::npos) << text;
  EXPECT_NE(text.find("truncated"), std::string::npos) << text;
  EXPECT_EQ(text.find(fmt::format("key {} of", kOtherId)), std::string::npos) << text;
}

// A dataset of `images` images of one identity, the last `damaged` of them not images at all.
std::string write_mostly_damaged(const std::string& dir, int images, int damaged) {
  RecordIOWriter writer(dir + "/train.rec", dir + "/train.idx");
  ImageRecordHeader header;
  header.labels = {static_cast<float>(images + 1), static_cast<float>(images + 1)};
  writer.write(0, make_image_record(header, {}));
  const auto good = test::encode_jpeg(test::face_rgb(0, 0, 112), 112, 112, 90);
  const std::vector<std::uint8_t> bad(200, 0x55);
  for (int key = 1; key <= images; ++key) {
    ImageRecordHeader image;
    image.label = 0;
    image.id = static_cast<std::uint64_t>(key);
    writer.write(key, make_image_record(image, key > images - damaged ? bad : good));
  }
  writer.close();
  return dir;
}

Config one_class_config(const std::string& dir, int images) {
  Config cfg;
  cfg.rec = dir;
  cfg.num_classes = 1;
  cfg.num_image = images;
  cfg.batch_size = 4;
  cfg.data_workers = 1;  // one worker meets the damage in the sampler's order: one message
  return cfg;
}

TEST(DataDamaged, DamageBeyondASmallShareStopsTheRun) {
  constexpr int kImages = 40;
  constexpr int kBad = 20;  // more than the 16 a dataset this small may lose
  ASSERT_EQ(damaged_records_tolerated(kImages), 16);
  EXPECT_EQ(damaged_records_tolerated(5'000'000), 50'000);
  const std::string dir = write_mostly_damaged(test::scratch_dir("data_mostly_damaged"), kImages,
                                               kBad);
  auto previous = spdlog::default_logger();
  std::ostringstream log;
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "mostly_damaged_test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  std::string message;
  {
    auto source = make_data_source(one_class_config(dir, kImages), 0, 1);
    Batch batch;
    try {
      for (int step = 0; step < 3 * kImages / 4; ++step) source->next(batch);
    } catch (const Error& e) {
      message = e.what();
    }
  }
  spdlog::set_default_logger(previous);
  EXPECT_NE(message.find(dir + "/train.rec: 17 of its 40 images are damaged, more than a run "
                               "skips (16: 1 in 100, at least 16)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("check that train.idx belongs to train.rec"), std::string::npos)
      << message;
}

TEST(DataDamaged, ADatasetWhoseProbedRecordsAreAllDamagedIsRefusedAtOpen) {
  const std::string dir =
      write_mostly_damaged(test::scratch_dir("data_all_damaged"), 40, 40);
  std::string message;
  try {
    make_data_source(one_class_config(dir, 40), 0, 1);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find(dir + "/train.rec: the 16 records read across it at start-up are all "
                               "damaged (key 1: not a JPEG, PNG or BMP image"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace pfc
