// A face dataset packed with pack_image_folder and read back through make_data_source:
// the insightface layout, exact labels, pixels equal to a direct libjpeg-turbo decode,
// records split in parts, and clear errors for datasets that do not fit the config.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "config/config.h"
#include "core/error.h"
#include "data/dataset_packer.h"
#include "data/distributed_sampler.h"
#include "data/image_record.h"
#include "data/recordio.h"
#include "data/recordio_data_source.h"
#include "support/face_images.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

constexpr int kIdentities = 6;
constexpr int kPerIdentity = 5;
constexpr int kImages = kIdentities * kPerIdentity;

Config dataset_config(const std::string& rec, std::int64_t batch_size, std::int64_t workers) {
  Config cfg;
  cfg.rec = rec;
  cfg.num_classes = kIdentities;
  cfg.num_image = kImages;
  cfg.batch_size = batch_size;
  cfg.data_workers = workers;
  cfg.seed = 77;
  return cfg;
}

std::string face_path(const std::string& dir, std::int64_t sample) {
  return fmt::format("{}/faces/id_{:03d}/img_{:02d}.jpg", dir, sample / kPerIdentity,
                     sample % kPerIdentity);
}

// What the source must deliver for `jpeg`: a direct decode, flipped or not, normalised.
std::vector<float> expected_image(const std::vector<std::uint8_t>& jpeg, bool flip) {
  int w = 0;
  int h = 0;
  const auto rgb = test::decode_jpeg_rgb(jpeg, w, h);
  std::vector<float> out(rgb.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        const int src_x = flip ? w - 1 - x : x;
        out[(y * w + x) * 3 + c] =
            (static_cast<float>(rgb[(y * w + src_x) * 3 + c]) / 255.0f - 0.5f) / 0.5f;
      }
  return out;
}

template <class Fn>
std::string error_text(Fn&& fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return std::string("usage: ") + e.what();
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
  return "no error";
}

// Each test packs its own copy: CTest runs the tests of one file as parallel processes.
class RecordIODataset : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = test::scratch_dir("recordio_dataset_" + name);
    dataset_ = test::make_face_dataset(dir_, kIdentities, kPerIdentity);
  }
  std::string dir_;
  std::string dataset_;
};

TEST_F(RecordIODataset, PackWritesInsightfaceLayout) {
  const RecordIOIndex index = RecordIOIndex::load(dataset_ + "/train.idx");
  ASSERT_EQ(index.size(), 1u + kImages + kIdentities);
  EXPECT_EQ(index.find(0), 0);
  const RecordIOFile file(dataset_ + "/train.rec");
  std::vector<std::uint8_t> payload;
  std::string why;
  ImageRecordHeader header;
  std::span<const std::uint8_t> image;
  auto read_key = [&](std::int64_t key) {
    ASSERT_TRUE(file.read(static_cast<std::uint64_t>(index.find(key)), payload, why)) << why;
    ASSERT_TRUE(parse_image_record(payload, header, image, why)) << why;
  };
  read_key(0);
  EXPECT_EQ(header.flag, 2u);
  EXPECT_EQ(header.labels, (std::vector<float>{kImages + 1, kImages + 1 + kIdentities}));
  EXPECT_TRUE(image.empty());
  for (std::int64_t key = 1; key <= kImages; ++key) {
    read_key(key);
    EXPECT_EQ(header.flag, 0u);
    EXPECT_EQ(header.primary_label(), static_cast<float>((key - 1) / kPerIdentity));
    EXPECT_EQ(header.id, static_cast<std::uint64_t>(key));
    EXPECT_EQ(std::vector<std::uint8_t>(image.begin(), image.end()),
              test::read_file(face_path(dir_, key - 1)));
  }
  for (int c = 0; c < kIdentities; ++c) {
    read_key(kImages + 1 + c);
    EXPECT_EQ(header.labels, (std::vector<float>{static_cast<float>(1 + c * kPerIdentity),
                                                 static_cast<float>(1 + (c + 1) * kPerIdentity)}));
  }
}

TEST_F(RecordIODataset, ReadsBackExactLabelsAndPixels) {
  const Config cfg = dataset_config(dataset_, 5, 3);
  auto source = make_data_source(cfg, 0, 1);
  auto* recordio = dynamic_cast<RecordIODataSource*>(source.get());
  ASSERT_NE(recordio, nullptr);
  EXPECT_EQ(source->batches_per_epoch(), kImages / 5);
  const DistributedSampler sampler(kImages, 5, 0, 1, 77);
  std::map<std::int64_t, int> label_counts;
  int flips = 0;
  Batch batch;
  for (std::int64_t k = 0; k < 2 * source->batches_per_epoch(); ++k) {
    source->next(batch);
    ASSERT_EQ(batch.images.shape(), (Shape{5, 112, 112, 3}));
    ASSERT_EQ(batch.labels.shape(), (Shape{5}));
    const GlobalBatch global = sampler.locate({}, k);
    const auto samples = sampler.rank_samples(global);
    for (std::int64_t i = 0; i < 5; ++i) {
      const std::int64_t sample = samples[i];
      EXPECT_EQ(batch.labels.data<std::int64_t>()[i], sample / kPerIdentity);
      ++label_counts[batch.labels.data<std::int64_t>()[i]];
      const bool flip = recordio->flipped(global.epoch, sample);
      flips += flip;
      const auto want = expected_image(test::read_file(face_path(dir_, sample)), flip);
      ASSERT_EQ(std::memcmp(batch.images.data<float>() + i * want.size(), want.data(),
                            want.size() * sizeof(float)),
                0)
          << "sample " << sample << " of batch " << k;
    }
  }
  for (int c = 0; c < kIdentities; ++c) EXPECT_EQ(label_counts[c], 2 * kPerIdentity);
  EXPECT_GT(flips, 10);
  EXPECT_LT(flips, 50);
  EXPECT_EQ(source->position(), (DataPosition{1, kImages}));
  EXPECT_EQ(source->skipped_records(), 0);
  EXPECT_FALSE(source->constant_images());
}

// A JPEG whose comment segment holds the RecordIO magic at a 4-byte aligned payload offset
// is stored in three parts and must read back and decode exactly.
TEST_F(RecordIODataset, RecordsSplitAroundTheMagicReadBack) {
  const std::string dir = test::scratch_dir("recordio_dataset_split");
  test::write_face_folder(dir + "/faces", 2, 2, 112);
  const std::string victim = dir + "/faces/id_001/img_00.jpg";
  const auto jpeg = test::read_file(victim);
  // SOI, then COM (FF FE, length 2 + 12): two copies of the magic, then the rest. In the
  // payload the JPEG starts at offset 24, so comment byte 0 sits at payload offset 30.
  std::uint8_t comment[16] = {0xFF, 0xFE, 0x00, 14, 0xAA, 0xBB};
  std::memcpy(comment + 6, &kRecordIOMagic, 4);
  std::memcpy(comment + 10, &kRecordIOMagic, 4);
  comment[14] = 0xCC;
  comment[15] = 0xDD;
  std::vector<std::uint8_t> tagged(jpeg.size() + sizeof comment);
  std::memcpy(tagged.data(), jpeg.data(), 2);
  std::memcpy(tagged.data() + 2, comment, sizeof comment);
  std::memcpy(tagged.data() + 2 + sizeof comment, jpeg.data() + 2, jpeg.size() - 2);
  test::write_file(victim, tagged);

  const PackSummary summary = pack_image_folder(dir + "/faces", dir + "/dataset/train", 112);
  EXPECT_EQ(summary.split_records, 1);
  EXPECT_EQ(summary.images, 4);
  Config cfg = dataset_config(dir + "/dataset", 4, 1);
  cfg.num_classes = 2;
  cfg.num_image = 4;
  auto source = make_data_source(cfg, 0, 1);
  auto* recordio = dynamic_cast<RecordIODataSource*>(source.get());
  Batch batch;
  source->next(batch);
  const auto samples = DistributedSampler(4, 4, 0, 1, 77).rank_samples({0, 0});
  for (int i = 0; i < 4; ++i) {
    const std::int64_t sample = samples[i];
    const std::string path = fmt::format("{}/faces/id_{:03d}/img_{:02d}.jpg", dir, sample / 2,
                                         sample % 2);
    const auto want = expected_image(test::read_file(path), recordio->flipped(0, sample));
    EXPECT_EQ(batch.labels.data<std::int64_t>()[i], sample / 2);
    EXPECT_EQ(std::memcmp(batch.images.data<float>() + i * want.size(), want.data(),
                          want.size() * sizeof(float)),
              0);
  }
  EXPECT_EQ(source->skipped_records(), 0);
}

// A dataset rewritten the way arcface_torch's scripts/shuffle_rec.py rewrites one (for DALI):
// the image records in a random order under new keys 0..N-1 and no header record, each record
// keeping its original id and its label as a scalar (flag 0). MXFaceDataset reads such a file
// by key and takes the label from the record, never the id: so must we, every image once per
// epoch with its own label, nothing skipped.
TEST_F(RecordIODataset, AShuffledDatasetTrainsOnEveryImage) {
  const RecordIOIndex index = RecordIOIndex::load(dataset_ + "/train.idx");
  const RecordIOFile original(dataset_ + "/train.rec");
  std::vector<std::int64_t> order(kImages);  // new key k holds original key order[k]
  for (std::int64_t k = 0; k < kImages; ++k) order[k] = k + 1;
  std::uint64_t state = 12345;
  for (std::int64_t k = kImages - 1; k > 0; --k) {  // Fisher-Yates with a fixed LCG
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(order[k], order[static_cast<std::int64_t>((state >> 33) % (k + 1))]);
  }
  const std::string shuffled = dir_ + "/shuffled";
  fs::create_directories(shuffled);
  {
    RecordIOWriter writer(shuffled + "/train.rec", shuffled + "/train.idx");
    std::vector<std::uint8_t> payload;
    std::string why;
    for (std::int64_t k = 0; k < kImages; ++k) {
      ASSERT_TRUE(original.read(static_cast<std::uint64_t>(index.find(order[k])), payload, why));
      ImageRecordHeader header;
      std::span<const std::uint8_t> jpeg;
      ASSERT_TRUE(parse_image_record(payload, header, jpeg, why));
      ImageRecordHeader rewritten;
      rewritten.label = header.primary_label();
      rewritten.id = header.id;  // the original key, not the new one
      rewritten.id2 = header.id2;
      writer.write(k, make_image_record(rewritten, jpeg));
    }
    writer.close();
  }

  Config cfg = dataset_config(shuffled, 5, 2);
  auto source = make_data_source(cfg, 0, 1);
  auto* recordio = dynamic_cast<RecordIODataSource*>(source.get());
  ASSERT_NE(recordio, nullptr);
  ASSERT_EQ(source->batches_per_epoch(), kImages / 5);
  const DistributedSampler sampler(kImages, 5, 0, 1, 77);
  std::set<std::int64_t> seen;
  Batch batch;
  for (std::int64_t b = 0; b < source->batches_per_epoch(); ++b) {
    source->next(batch);
    const auto samples = sampler.rank_samples(sampler.locate({}, b));
    for (std::int64_t i = 0; i < 5; ++i) {
      const std::int64_t key = samples[i];  // no header: sample k is key k
      const std::int64_t image = order[key] - 1;
      EXPECT_EQ(batch.labels.data<std::int64_t>()[i], image / kPerIdentity) << "key " << key;
      const auto want =
          expected_image(test::read_file(face_path(dir_, image)), recordio->flipped(0, key));
      EXPECT_EQ(std::memcmp(batch.images.data<float>() + i * want.size(), want.data(),
                            want.size() * sizeof(float)),
                0)
          << "key " << key;
      seen.insert(image);
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kImages));
  EXPECT_EQ(source->skipped_records(), 0);
}

TEST_F(RecordIODataset, ResumeFromAPositionRepeatsTheStream) {
  const Config cfg = dataset_config(dataset_, 4, 1);
  auto first = make_data_source(cfg, 0, 1);
  Batch batch;
  for (int k = 0; k < 5; ++k) first->next(batch);  // crosses into epoch 1 (7 per epoch)
  const DataPosition saved = first->position();
  EXPECT_EQ(saved, (DataPosition{0, 20}));
  std::vector<std::vector<float>> images;
  std::vector<std::vector<std::int64_t>> labels;
  for (int k = 0; k < 5; ++k) {
    first->next(batch);
    images.emplace_back(batch.images.data<float>(), batch.images.data<float>() + batch.images.numel());
    labels.emplace_back(batch.labels.data<std::int64_t>(), batch.labels.data<std::int64_t>() + 4);
  }
  EXPECT_EQ(first->position(), (DataPosition{1, 12}));

  auto resumed = make_data_source(dataset_config(dataset_, 4, 3), 0, 1);
  resumed->next(batch);  // read a little first: seek must discard what was prefetched
  resumed->seek(saved);
  EXPECT_EQ(resumed->position(), saved);
  for (int k = 0; k < 5; ++k) {
    resumed->next(batch);
    EXPECT_EQ(std::vector<std::int64_t>(batch.labels.data<std::int64_t>(),
                                        batch.labels.data<std::int64_t>() + 4),
              labels[k]);
    EXPECT_EQ(std::memcmp(batch.images.data<float>(), images[k].data(),
                          images[k].size() * sizeof(float)),
              0);
  }
}

TEST_F(RecordIODataset, ResumeOnMoreRanksReadsTheSameGlobalBatch) {
  auto one = make_data_source(dataset_config(dataset_, 6, 2), 0, 1);
  Batch batch;
  one->next(batch);
  one->next(batch);
  const DataPosition saved = one->position();
  one->next(batch);
  std::multiset<std::int64_t> want(batch.labels.data<std::int64_t>(),
                                   batch.labels.data<std::int64_t>() + 6);
  std::multiset<std::int64_t> got;
  for (int rank = 0; rank < 3; ++rank) {
    auto part = make_data_source(dataset_config(dataset_, 2, 2), rank, 3);
    part->seek(saved);
    part->next(batch);
    got.insert(batch.labels.data<std::int64_t>(), batch.labels.data<std::int64_t>() + 2);
  }
  EXPECT_EQ(got, want);
}

TEST_F(RecordIODataset, ConfigThatDoesNotFitTheHeaderIsAUsageError) {
  Config cfg = dataset_config(dataset_, 4, 1);
  cfg.num_classes = 7;
  std::string text = error_text([&] { make_data_source(cfg, 0, 1); });
  EXPECT_NE(text.find("usage:"), std::string::npos) << text;
  EXPECT_NE(text.find("num_classes = 7"), std::string::npos) << text;
  EXPECT_NE(text.find("announces 6 identities"), std::string::npos) << text;

  cfg = dataset_config(dataset_, 4, 1);
  cfg.num_image = 31;
  text = error_text([&] { make_data_source(cfg, 0, 1); });
  EXPECT_NE(text.find("num_image = 31"), std::string::npos) << text;
  EXPECT_NE(text.find("holds 30 images"), std::string::npos) << text;

  cfg = dataset_config(dataset_, 16, 1);
  text = error_text([&] { make_data_source(cfg, 0, 2); });
  EXPECT_NE(text.find("usage:"), std::string::npos) << text;
  EXPECT_NE(text.find("global batch"), std::string::npos) << text;

  cfg = dataset_config(dir_ + "/no_such_folder", 4, 1);
  text = error_text([&] { make_data_source(cfg, 0, 1); });
  EXPECT_NE(text.find("no such folder"), std::string::npos) << text;
}

TEST_F(RecordIODataset, ImagesOfAnotherSizeAreAUsageErrorAtOpen) {
  Config cfg = dataset_config(dataset_, 4, 1);
  cfg.image_size = 32;
  const std::string text = error_text([&] { make_data_source(cfg, 0, 1); });
  EXPECT_NE(text.find("usage:"), std::string::npos) << text;
  EXPECT_NE(text.find("holds 112x112 images (key 1), but image_size = 32; set image_size = 112"),
            std::string::npos)
      << text;
}

TEST_F(RecordIODataset, MissingOrMismatchedIndexIsAClearError) {
  const std::string dir = test::scratch_dir("recordio_dataset_index");
  auto copy_dataset = [&](const std::string& name) {
    fs::create_directories(dir + "/" + name);
    for (const char* file : {"train.rec", "train.idx"})
      fs::copy_file(dataset_ + "/" + file, dir + "/" + name + "/" + file);
    return dir + "/" + name;
  };
  const std::string no_idx = copy_dataset("no_idx");
  fs::remove(no_idx + "/train.idx");
  std::string text = error_text([&] { make_data_source(dataset_config(no_idx, 4, 1), 0, 1); });
  EXPECT_NE(text.find("train.idx is missing"), std::string::npos) << text;

  // An index written for another dataset: too few image keys for this header.
  const std::string other = test::make_face_dataset(dir + "/small", 2, 3);
  const std::string foreign = copy_dataset("foreign_idx");
  fs::copy_file(other + "/train.idx", foreign + "/train.idx",
                fs::copy_options::overwrite_existing);
  text = error_text([&] { make_data_source(dataset_config(foreign, 4, 1), 0, 1); });
  EXPECT_NE(text.find("error:"), std::string::npos) << text;
  EXPECT_NE(text.find("lacks some image keys"), std::string::npos) << text;

  // Every image offset moved by 4 bytes: the keys are there but point at no record.
  const std::string shifted = copy_dataset("shifted_idx");
  const RecordIOIndex index = RecordIOIndex::load(shifted + "/train.idx");
  std::string lines;
  for (std::size_t i = 0; i < index.size(); ++i)
    lines += fmt::format("{}\t{}\n", index.entry(i).first,
                         index.entry(i).second + (index.entry(i).first == 0 ? 0 : 4));
  test::write_file(shifted + "/train.idx", std::vector<std::uint8_t>(lines.begin(), lines.end()));
  text = error_text([&] { make_data_source(dataset_config(shifted, 4, 1), 0, 1); });
  EXPECT_NE(text.find("does not match"), std::string::npos) << text;

  const std::string no_header = copy_dataset("no_header");
  std::string without_zero;
  for (std::size_t i = 1; i < index.size(); ++i)
    without_zero += fmt::format("{}\t{}\n", index.entry(i).first, index.entry(i).second);
  test::write_file(no_header + "/train.idx",
                   std::vector<std::uint8_t>(without_zero.begin(), without_zero.end()));
  text = error_text([&] { make_data_source(dataset_config(no_header, 4, 1), 0, 1); });
  EXPECT_NE(text.find("no key 0"), std::string::npos) << text;
}

}  // namespace
}  // namespace pfc
