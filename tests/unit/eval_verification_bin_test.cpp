// insightface's verification files: (bins, issame_list) written as Python 2 wrote them (bytes
// checked here) and by python3's pickle in both protocols (the learning test's
// tests/integration/learning/write_verification_bin.py); every way a file can be wrong is a
// message naming the file and the item; images decode as the training pipeline decodes them,
// or say which one does not.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "data/face_image_decoder.h"
#include "eval/image_source.h"
#include "eval/verification_bin.h"
#include "support/face_images.h"
#include "support/test_paths.h"
#include "support/usage_error.h"
#include "support/verification_bins.h"

namespace pfc {
namespace {

using test::Bytes;
using test::usage_error;

void expect_same_pairs(const VerificationBin& bin, const test::FacePairs& pairs) {
  ASSERT_EQ(bin.pairs(), static_cast<std::int64_t>(pairs.issame.size()));
  ASSERT_EQ(bin.images(), static_cast<std::int64_t>(pairs.images.size()));
  EXPECT_EQ(bin.issame(), pairs.issame);
  for (std::size_t i = 0; i < pairs.images.size(); ++i) {
    const auto image = bin.image(static_cast<std::int64_t>(i));
    EXPECT_EQ(Bytes(image.begin(), image.end()), pairs.images[i]) << "image " << i;
  }
}

TEST(VerificationBin, ReadsPython2Files) {
  const std::string dir = test::scratch_dir("bins");
  const test::FacePairs pairs = test::face_pairs(3);
  test::write_verification_bin(dir + "/lfw.bin", pairs);
  const VerificationBin bin(dir + "/lfw.bin");
  EXPECT_EQ(bin.name(), "lfw");
  expect_same_pairs(bin, pairs);
}

TEST(VerificationBin, ReadsFilesThatPython3WritesInBothProtocols) {
  if (std::system("python3 -c 'import pickle' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no python3";
  const std::string dir = test::scratch_dir("python_bins");
  test::write_face_folder(dir + "/photos", 6, 3, 112);
  std::set<std::string> photos;  // their bytes
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir + "/photos")) {
    if (!entry.is_regular_file()) continue;
    const Bytes b = test::read_file(entry.path().string());
    photos.emplace(b.begin(), b.end());
  }
  const std::string script =
      test::source_dir() + "/tests/integration/learning/write_verification_bin.py";
  const std::string command = "python3 " + script + " " + dir + "/photos 20 7 " + dir +
                              "/py2.bin " + dir + "/py3.bin >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const VerificationBin py2(dir + "/py2.bin"), py3(dir + "/py3.bin");
  ASSERT_EQ(py3.pairs(), 20);
  test::FacePairs read;
  read.issame = py3.issame();
  for (std::int64_t i = 0; i < py3.images(); ++i) {
    const auto image = py3.image(i);
    read.images.emplace_back(image.begin(), image.end());
    EXPECT_TRUE(photos.count(std::string(image.begin(), image.end())))
        << "image " << i << " is none of the photos";
  }
  expect_same_pairs(py2, read);
  // The protocol 2 file is what Python 2 wrote, byte for byte.
  EXPECT_EQ(test::read_file(dir + "/py2.bin"), test::python2_pickle(read.images, read.issame));
}

// The message of reading a file holding `content`, which must name the file.
std::string refusal(const Bytes& content) {
  const std::string path = test::scratch_dir("bad") + "/bad.bin";
  test::write_file(path, content);
  const std::string why = usage_error([&] { VerificationBin{path}; });
  EXPECT_NE(why.find(path), std::string::npos) << why;
  return why;
}

Bytes jpeg() { return test::encode_jpeg(test::face_rgb(0, 0, 112), 112, 112, 90); }

TEST(VerificationBin, NamesTheItemThatIsWrong) {
  const Bytes j = jpeg();
  EXPECT_NE(refusal(test::python2_pickle({j, j, j}, {true})).find("odd number of images (3)"),
            std::string::npos);
  EXPECT_NE(refusal(test::python2_pickle({j, j, j, j}, {true}))
                .find("4 images for 1 pairs; 1 pairs need 2 images"),
            std::string::npos);
  EXPECT_NE(refusal(test::python2_pickle({}, {})).find("no pairs"), std::string::npos);
  // A list of booleans where the images should be: image 0 is True.
  EXPECT_NE(refusal({0x80, 2, ']', '(', 0x88, 0x89, 'e', ']', '(', 0x88, 0x88, 'e', 0x86, '.'})
                .find("image 0 is True, not the bytes"),
            std::string::npos);
  EXPECT_NE(refusal({0x80, 2, ']', '(', 'U', 1, 'x', 'U', 1, 'y', 'e', ']', '(', 0x88, 'C', 1,
                     'z', 'e', 0x86, '.'})
                .find("issame_list item 1 is a byte string of 1 bytes, not True or False"),
            std::string::npos);
  EXPECT_NE(refusal({0x80, 2, ']', '.'}).find("holds a list of 0, not (images, issame_list)"),
            std::string::npos);
  EXPECT_NE(refusal({0x80, 2, 0x88, ']', 0x86, '.'}).find("first item is True"),
            std::string::npos);
  EXPECT_NE(refusal({0x80, 2, 'c', 'o', 's', '\n'}).find("GLOBAL"), std::string::npos);
  Bytes truncated = test::python2_pickle({j, j}, {true});
  truncated.resize(truncated.size() / 2);
  EXPECT_NE(refusal(truncated).find("truncated"), std::string::npos);
  EXPECT_NE(refusal(j).find("not a pickle"), std::string::npos);
}

TEST(VerificationBin, AMissingFileIsNamed) {
  const std::string path = test::scratch_dir("none") + "/lfw.bin";
  EXPECT_NE(usage_error([&] { VerificationBin{path}; }).find("'" + path + "' does not exist"),
            std::string::npos);
}

TEST(BinImageSource, DecodesAsTheTrainingPipeline) {
  const std::string dir = test::scratch_dir("decode");
  const test::FacePairs pairs = test::face_pairs(1);
  test::write_verification_bin(dir + "/x.bin", pairs);
  BinImageSource source(std::make_shared<const VerificationBin>(dir + "/x.bin"), 112);
  ASSERT_EQ(source.size(), 2);
  std::vector<float> ours(112 * 112 * 3), pipeline(112 * 112 * 3);
  source.decode(1, ours.data());
  FaceImageDecoder decoder(112);
  std::string why;
  ASSERT_TRUE(decoder.decode(pairs.images[1], false, pipeline.data(), why)) << why;
  EXPECT_EQ(ours, pipeline);
}

TEST(BinImageSource, NamesTheImageThatDoesNotDecode) {
  const std::string dir = test::scratch_dir("undecodable");
  const Bytes small = test::encode_jpeg(test::face_rgb(0, 0, 64), 64, 64, 90);
  test::write_file(dir + "/x.bin", test::python2_pickle({jpeg(), Bytes(50, 7), small, jpeg()},
                                                        {true, false}));
  BinImageSource source(std::make_shared<const VerificationBin>(dir + "/x.bin"), 112);
  std::vector<float> out(112 * 112 * 3);
  const std::string junk = usage_error([&] { source.decode(1, out.data()); });
  EXPECT_NE(junk.find("image 1 of 4 does not decode: not a readable JPEG"), std::string::npos)
      << junk;
  const std::string size = usage_error([&] { source.decode(2, out.data()); });
  EXPECT_NE(size.find("image 2 of 4 does not decode: image is 64x64, expected 112x112"),
            std::string::npos)
      << size;
}

}  // namespace
}  // namespace pfc
