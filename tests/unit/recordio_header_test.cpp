// The header record of an insightface dataset holds its counts as float32 labels, which past
// 2^24 keys are rounded (WebFace42M: 42 474 558 is stored as 42 474 560): the counts come from
// the index and the identity records, and a header within float32's rounding of them is
// accepted. Headers that hold no count at all (inf, NaN, 1e30) and index offsets no file can
// have are refused with the file and what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "core/error.h"
#include "data/dataset_header.h"
#include "data/image_record.h"
#include "data/record_dataset.h"
#include "data/recordio.h"
#include "support/face_images.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::string& folder) {
  try {
    RecordDataset dataset(folder);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::vector<std::uint8_t> header_record(float end_image_key, float end_identity_key) {
  ImageRecordHeader header;
  header.labels = {end_image_key, end_identity_key};
  return make_image_record(header, {});
}

std::vector<std::uint8_t> image_record(std::int64_t key, float label) {
  ImageRecordHeader header;
  header.label = label;
  header.id = static_cast<std::uint64_t>(key);
  const auto jpeg = test::encode_jpeg(test::face_rgb(static_cast<int>(label), 0, 16), 16, 16, 90);
  return make_image_record(header, jpeg);
}

std::vector<std::uint8_t> identity_record(std::int64_t first_image, std::int64_t end_image) {
  ImageRecordHeader header;
  header.labels = {static_cast<float>(first_image), static_cast<float>(end_image)};
  return make_image_record(header, {});
}

// A dataset of `images` image keys and `identities` identity keys whose train.rec holds only
// the records listed (key -> payload); every other key of the index points past the end of
// the file, as in a truncated copy, so that the index can be as long as a real one.
struct SparseDataset {
  std::string folder;
  std::int64_t images, identities;
};

using KeyedRecords = std::vector<std::pair<std::int64_t, std::vector<std::uint8_t>>>;

void write_sparse_dataset(const SparseDataset& d, const KeyedRecords& records) {
  fs::create_directories(d.folder);
  const std::string rec = d.folder + "/train.rec";
  const std::string written_idx = d.folder + "/written.idx";
  {
    RecordIOWriter writer(rec, written_idx);
    for (const auto& [key, payload] : records) writer.write(key, payload);
    writer.close();
  }
  const RecordIOIndex written = RecordIOIndex::load(written_idx);
  fs::remove(written_idx);
  const std::uint64_t beyond = fs::file_size(rec) + 4096;
  std::FILE* idx = std::fopen((d.folder + "/train.idx").c_str(), "w");
  ASSERT_NE(idx, nullptr);
  const std::int64_t keys = 1 + d.images + d.identities;
  for (std::int64_t key = 0; key < keys; ++key) {
    const std::int64_t at = written.find(key);
    const std::uint64_t offset = at >= 0 ? static_cast<std::uint64_t>(at)
                                         : beyond + 8 * static_cast<std::uint64_t>(key);
    std::fprintf(idx, "%lld\t%llu\n", static_cast<long long>(key),
                 static_cast<unsigned long long>(offset));
  }
  ASSERT_EQ(std::fclose(idx), 0);
}

// More than 2^24 keys: 16 777 218 images (the header's end of image keys, 16 777 219, is
// stored as the float32 16 777 220) and 3 identities. The index is 300 MB of lines, loaded
// once; the records are only the few the counts are read from.
TEST(RecordIOHeader, CountsPast2To24ComeFromTheIndexAndTheIdentityRecords) {
  constexpr std::int64_t kImages = (std::int64_t{1} << 24) + 2;
  constexpr std::int64_t kIdentities = 3;
  const float end_image = static_cast<float>(kImages + 1);
  const float end_identity = static_cast<float>(kImages + 1 + kIdentities);
  ASSERT_EQ(end_image, 16777220.0f) << "the header's float32 is not the truth";
  const std::string dir = test::scratch_dir("recordio_header_large");
  KeyedRecords records = {{0, header_record(end_image, end_identity)}};
  for (std::int64_t key = kImages - 2; key <= kImages; ++key)
    records.emplace_back(key, image_record(key, 2));
  for (std::int64_t c = 0; c < kIdentities; ++c)
    records.emplace_back(kImages + 1 + c, identity_record(1 + c, 2 + c));
  const SparseDataset large{dir, kImages, kIdentities};
  write_sparse_dataset(large, records);
  const std::string idx = dir + "/train.idx";
  const RecordIOIndex index = RecordIOIndex::load(idx);
  fs::remove(idx);
  const RecordIOFile rec(dir + "/train.rec");
  const auto header = [](float end_images, float end_identities) {
    ImageRecordHeader h;
    h.flag = 2;
    h.labels = {end_images, end_identities};
    return h;
  };
  const DatasetCounts counts =
      read_dataset_counts(header(end_image, end_identity), index, rec, idx);
  EXPECT_EQ(counts.images, kImages);
  EXPECT_EQ(counts.classes, kIdentities);

  // A header beyond float32's rounding of the truth is not this index's header.
  const auto refusal = [&](float end_images) {
    try {
      read_dataset_counts(header(end_images, end_identity), index, rec, idx);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // 16 777 218 is a float32 above 2^24 of its own: the image records do not end there.
  const std::string below = refusal(end_image - 2);
  EXPECT_NE(below.find(dir + "/train.rec: the header record's label[0] = 16777218 (1 + the "
                             "number of images, a float32) fits none of the keys that round to "
                             "it, 16777218..16777218"),
            std::string::npos)
      << below;
  EXPECT_NE(below.find("key 16777217 is an image record, key 16777218 is an image record"),
            std::string::npos)
      << below;
  const std::string above = refusal(end_image + 8);
  EXPECT_NE(above.find("label[0] is 16777228, beyond the last key of " + idx + " (16777221)"),
            std::string::npos)
      << above;
}

TEST(RecordIOHeader, HeadersThatHoldNoCountAreNamed) {
  const std::string dir = test::scratch_dir("recordio_header_bad");
  const float inf = std::numeric_limits<float>::infinity();
  const struct {
    const char* name;
    float end_image, end_identity;
    const char* expected;
  } cases[] = {
      {"inf", inf, inf, "header record's label[0] is inf"},
      {"nan", std::nanf(""), 6, "header record's label[0] is nan"},
      {"huge", 1e30f, 1e30f, "header record's label[0] is 1e+30"},
      {"fraction", 2.5f, 6, "header record's label[0] is 2.5"},
      {"identity_inf", 4, inf, "header record's label[1] is inf"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string folder = dir + "/" + c.name;
    write_sparse_dataset({folder, 3, 2}, {{0, header_record(c.end_image, c.end_identity)},
                                          {1, image_record(1, 0)},
                                          {2, image_record(2, 0)},
                                          {3, image_record(3, 1)}});
    const std::string why = error_of(folder);
    EXPECT_NE(why.find(folder + "/train.rec"), std::string::npos) << why;
    EXPECT_NE(why.find(c.expected), std::string::npos) << why;
    EXPECT_EQ(why.find("9223372036854775807"), std::string::npos) << why;
  }
}

// An offset no file can have (past 2^63, where pread's off_t ends) is refused naming the index,
// its line and key; one merely past the end of train.rec is a record cut off by a truncated
// copy: that record is damaged, said with its offset, and the size check does not wrap around.
TEST(RecordIOHeader, OffsetsBeyondTheFileNameTheKey) {
  const std::string dir = test::scratch_dir("recordio_header_offsets");
  const std::string folder = dir + "/wrapped";
  write_sparse_dataset({folder, 3, 0}, {{0, header_record(4, 4)},
                                        {1, image_record(1, 0)},
                                        {2, image_record(2, 0)},
                                        {3, image_record(3, 1)}});
  const RecordIOIndex index = RecordIOIndex::load(folder + "/train.idx");
  std::string lines;
  for (std::size_t i = 0; i < index.size(); ++i) {
    const auto [key, offset] = index.entry(i);
    lines += fmt::format("{}\t{}\n", key, key == 2 ? 18446744073709551608ull : offset);
  }
  test::write_file(folder + "/train.idx", std::vector<std::uint8_t>(lines.begin(), lines.end()));
  const std::string why = error_of(folder);
  EXPECT_NE(why.find(folder + "/train.idx:3"), std::string::npos) << why;
  EXPECT_NE(why.find("key 2 has offset 18446744073709551608"), std::string::npos) << why;
  EXPECT_EQ(why.find("Invalid argument"), std::string::npos) << why;

  const RecordIOFile rec(folder + "/train.rec");
  std::vector<std::uint8_t> payload;
  std::string damage;
  for (std::uint64_t offset : {rec.size() + 1, std::uint64_t{1} << 62,
                               (std::uint64_t{1} << 63) - 8}) {
    EXPECT_FALSE(rec.read(offset, payload, damage));
    EXPECT_NE(damage.find("past the end of the file"), std::string::npos) << damage;
    EXPECT_FALSE(rec.has_record_at(offset));
  }
}

}  // namespace
}  // namespace pfc
