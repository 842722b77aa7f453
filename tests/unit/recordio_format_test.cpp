// RecordIO framing (MXNet's format): round trips, records split around the magic number,
// the index file, the image record header, and damage reported instead of thrown.
#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "data/image_record.h"
#include "data/recordio.h"
#include "support/face_images.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

std::uint32_t word_at(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  std::uint32_t w;
  std::memcpy(&w, bytes.data() + offset, 4);
  return w;
}

void put_word(std::vector<std::uint8_t>& bytes, std::size_t offset, std::uint32_t w) {
  std::memcpy(bytes.data() + offset, &w, 4);
}

TEST(RecordIOFormat, RoundTripsRecordsOfEveryLengthWithPadding) {
  const std::string dir = test::scratch_dir("recordio_round_trip");
  std::vector<std::vector<std::uint8_t>> records;
  for (int len : {0, 1, 2, 3, 4, 5, 7, 8, 100}) {
    std::vector<std::uint8_t> r(len);
    for (int i = 0; i < len; ++i) r[i] = static_cast<std::uint8_t>(i * 7 + len);
    records.push_back(r);
  }
  {
    RecordIOWriter writer(dir + "/a.rec", dir + "/a.idx");
    for (std::size_t k = 0; k < records.size(); ++k)
      writer.write(static_cast<std::int64_t>(k) + 10, records[k]);
    EXPECT_EQ(writer.split_records(), 0);
    writer.close();
  }
  const auto file_bytes = test::read_file(dir + "/a.rec");
  EXPECT_EQ(file_bytes.size() % 4, 0u);
  EXPECT_EQ(word_at(file_bytes, 0), kRecordIOMagic);

  const RecordIOIndex index = RecordIOIndex::load(dir + "/a.idx");
  ASSERT_EQ(index.size(), records.size());
  const RecordIOFile file(dir + "/a.rec");
  std::vector<std::uint8_t> payload;
  std::string why;
  for (std::size_t k = 0; k < records.size(); ++k) {
    const std::int64_t offset = index.find(static_cast<std::int64_t>(k) + 10);
    ASSERT_GE(offset, 0);
    EXPECT_EQ(offset % 4, 0);
    ASSERT_TRUE(file.read(static_cast<std::uint64_t>(offset), payload, why)) << why;
    EXPECT_EQ(payload, records[k]);
  }
  EXPECT_EQ(index.find(9), -1);
}

TEST(RecordIOFormat, SplitsAroundAlignedMagicAndJoinsThePartsBack) {
  const std::string dir = test::scratch_dir("recordio_multipart");
  // The magic at aligned offsets 4 and 12 (two splits) and once unaligned at 21 (no split).
  std::vector<std::uint8_t> record(30);
  for (std::size_t i = 0; i < record.size(); ++i) record[i] = static_cast<std::uint8_t>(0x40 + i);
  put_word(record, 4, kRecordIOMagic);
  put_word(record, 12, kRecordIOMagic);
  std::memcpy(record.data() + 21, &kRecordIOMagic, 4);
  const std::vector<std::uint8_t> after = {1, 2, 3, 4, 5};
  {
    RecordIOWriter writer(dir + "/m.rec", dir + "/m.idx");
    writer.write(0, record);
    writer.write(1, after);
    EXPECT_EQ(writer.split_records(), 1);
    writer.close();
  }
  const auto disk = test::read_file(dir + "/m.rec");
  // Part 1: flag 1, bytes [0, 4). Part 2: flag 2, bytes [8, 12). Part 3: flag 3, [16, 30).
  auto flag = [&](std::size_t at) { return word_at(disk, at + 4) >> 29; };
  auto length = [&](std::size_t at) { return word_at(disk, at + 4) & ((1u << 29) - 1); };
  EXPECT_EQ(word_at(disk, 0), kRecordIOMagic);
  EXPECT_EQ(flag(0), 1u);
  EXPECT_EQ(length(0), 4u);
  EXPECT_EQ(flag(12), 2u);
  EXPECT_EQ(length(12), 4u);
  EXPECT_EQ(flag(24), 3u);
  EXPECT_EQ(length(24), 14u);
  EXPECT_EQ(disk.size(), 24u + 8u + 16u + 8u + 8u);

  const RecordIOIndex index = RecordIOIndex::load(dir + "/m.idx");
  const RecordIOFile file(dir + "/m.rec");
  std::vector<std::uint8_t> payload;
  std::string why;
  ASSERT_TRUE(file.read(static_cast<std::uint64_t>(index.find(0)), payload, why)) << why;
  EXPECT_EQ(payload, record);
  ASSERT_TRUE(file.read(static_cast<std::uint64_t>(index.find(1)), payload, why)) << why;
  EXPECT_EQ(payload, after);
}

TEST(RecordIOFormat, ReportsDamageWithoutThrowing) {
  const std::string dir = test::scratch_dir("recordio_damage");
  {
    RecordIOWriter writer(dir + "/d.rec", dir + "/d.idx");
    writer.write(0, std::vector<std::uint8_t>(40, 7));
    writer.write(1, std::vector<std::uint8_t>(40, 8));
    writer.close();
  }
  auto disk = test::read_file(dir + "/d.rec");
  put_word(disk, 0, 0x12345678u);  // record 0 loses its magic
  disk.resize(disk.size() - 10);   // record 1 is cut short
  test::write_file(dir + "/d.rec", disk);
  const RecordIOFile file(dir + "/d.rec");
  std::vector<std::uint8_t> payload;
  std::string why;
  EXPECT_FALSE(file.read(0, payload, why));
  EXPECT_NE(why.find("magic"), std::string::npos) << why;
  EXPECT_FALSE(file.read(48, payload, why));
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;
  EXPECT_FALSE(file.read(4096, payload, why));
  EXPECT_FALSE(file.has_record_at(0));
  EXPECT_TRUE(file.has_record_at(48));
}

TEST(RecordIOFormat, IndexErrorsNameTheFileAndLine) {
  const std::string dir = test::scratch_dir("recordio_index");
  test::write_file(dir + "/ok.idx", {'0', '\t', '0', '\n', '5', '\t', '1', '2', '\r', '\n',
                                     '\n', '3', ' ', '8', '\n'});
  const RecordIOIndex index = RecordIOIndex::load(dir + "/ok.idx");
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.find(5), 12);
  EXPECT_EQ(index.find(3), 8);
  EXPECT_EQ(index.entry(0).first, 0);

  test::write_file(dir + "/bad.idx", {'0', '\t', '0', '\n', '1', 'x', '\t', '4', '\n'});
  try {
    RecordIOIndex::load(dir + "/bad.idx");
    FAIL() << "a malformed index was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.idx:2"), std::string::npos) << e.what();
  }
  test::write_file(dir + "/dup.idx", {'1', '\t', '0', '\n', '1', '\t', '4', '\n'});
  EXPECT_THROW(RecordIOIndex::load(dir + "/dup.idx"), Error);
  // Keys that share an offset would all read one record.
  const std::string shared = "0\t0\n1\t8\n2\t8\n3\t8\n4\t16\n";
  test::write_file(dir + "/shared.idx", std::vector<std::uint8_t>(shared.begin(), shared.end()));
  try {
    RecordIOIndex::load(dir + "/shared.idx");
    FAIL() << "an index whose keys share an offset was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("keys 1 and 2 (and 1 more) point at the same offset 8"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(RecordIOIndex::load(dir + "/missing.idx"), Error);
}

TEST(ImageRecord, PacksAndParsesLikeMxnetRecordio) {
  const std::vector<std::uint8_t> jpeg = {0xFF, 0xD8, 1, 2, 3};
  ImageRecordHeader scalar;
  scalar.label = 42.0f;
  scalar.id = 7;
  scalar.id2 = 9;
  const auto packed = make_image_record(scalar, jpeg);
  ASSERT_EQ(packed.size(), 24u + jpeg.size());
  ImageRecordHeader parsed;
  std::span<const std::uint8_t> image;
  std::string why;
  ASSERT_TRUE(parse_image_record(packed, parsed, image, why)) << why;
  EXPECT_EQ(parsed.flag, 0u);
  EXPECT_EQ(parsed.primary_label(), 42.0f);
  EXPECT_EQ(parsed.id, 7u);
  EXPECT_EQ(parsed.id2, 9u);
  EXPECT_EQ(std::vector<std::uint8_t>(image.begin(), image.end()), jpeg);

  ImageRecordHeader multi;
  multi.labels = {3.0f, 11.0f, 0.5f};
  const auto packed_multi = make_image_record(multi, jpeg);
  ASSERT_EQ(packed_multi.size(), 24u + 12u + jpeg.size());
  ASSERT_TRUE(parse_image_record(packed_multi, parsed, image, why)) << why;
  EXPECT_EQ(parsed.flag, 3u);
  EXPECT_EQ(parsed.label, 0.0f);
  EXPECT_EQ(parsed.primary_label(), 3.0f);
  EXPECT_EQ(parsed.labels, multi.labels);
  EXPECT_EQ(image.size(), jpeg.size());

  EXPECT_FALSE(parse_image_record(std::span(packed_multi).first(30), parsed, image, why));
  EXPECT_FALSE(parse_image_record(std::span(packed).first(10), parsed, image, why));
}

}  // namespace
}  // namespace pfc
