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
#include "eval/check_verification_bins.h"
#include "eval/image_source.h"
#include "eval/verification_bin.h"
#include "support/face_images.h"
#include "support/image_files.h"
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

// Python 3's own pickle at protocol 2 (what `pickle.dump(..., protocol=2)` writes there: bytes
// as _codecs.encode calls), and issame_list as the integers 1 and 0.
TEST(VerificationBin, ReadsPython3Protocol2FilesAndIntegerFlags) {
  if (std::system("python3 -c 'import pickle' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no python3";
  const std::string dir = test::scratch_dir("python3_protocol2_bins");
  const test::FacePairs pairs = test::face_pairs(12);
  std::string images;
  for (std::size_t i = 0; i < pairs.images.size(); ++i) {
    const std::string path = dir + "/" + std::to_string(i) + ".jpg";
    test::write_file(path, pairs.images[i]);
    images += "open('" + path + "', 'rb').read(), ";
  }
  std::string flags;
  for (bool same : pairs.issame) flags += same ? "1, " : "0, ";
  const std::string script = dir + "/write.py";
  test::write_text_file(script, "import pickle\nbins = [" + images + "]\nissame = [" + flags +
                                    "]\npickle.dump((bins, [bool(x) for x in issame]), open('" +
                                    dir + "/p2.bin', 'wb'), protocol=2)\npickle.dump((bins, "
                                    "issame), open('" + dir + "/ints.bin', 'wb'), protocol=2)\n");
  ASSERT_EQ(std::system(("python3 " + script).c_str()), 0);
  ASSERT_NE(test::read_file(dir + "/p2.bin").size(), 0u);
  const Bytes file = test::read_file(dir + "/p2.bin");
  ASSERT_NE(std::string(file.begin(), file.end()).find("_codecs"), std::string::npos);
  expect_same_pairs(VerificationBin(dir + "/p2.bin"), pairs);
  expect_same_pairs(VerificationBin(dir + "/ints.bin"), pairs);
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
  EXPECT_NE(refusal({0x80, 2, ']', '(', 'U', 1, 'x', 'U', 1, 'y', 'e', ']', '(', 'K', 2, 'e',
                     0x86, '.'})
                .find("issame_list item 0 is the integer 2, not True or False (or 1 or 0)"),
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
  // 64 x 80: load_bin would resize it to 112 x 140, which is not 112 x 112.
  const Bytes small = test::encode_jpeg(test::face_rgb(0, 0, 80), 64, 80, 90);
  test::write_file(dir + "/x.bin", test::python2_pickle({jpeg(), Bytes(50, 7), small, jpeg()},
                                                        {true, false}));
  BinImageSource source(std::make_shared<const VerificationBin>(dir + "/x.bin"), 112);
  std::vector<float> out(112 * 112 * 3);
  const std::string junk = usage_error([&] { source.decode(1, out.data()); });
  EXPECT_NE(junk.find("image 1 of 4 does not decode: not a JPEG, PNG or BMP image"),
            std::string::npos)
      << junk;
  const std::string size = usage_error([&] { source.decode(2, out.data()); });
  EXPECT_NE(size.find("image 2 of 4 does not decode: image is 64x80, which arcface_torch's "
                      "load_bin cannot make 112x112 either"),
            std::string::npos)
      << size;
}

// Everything a verification needs, before any forward: 10 pairs at least, and every image of
// every file decoding (PNG, BMP and 250 x 250 JPEGs, as insightface's files may hold them).
TEST(CheckVerificationBins, RefusesBeforeAnyWorkNamingTheFile) {
  const std::string dir = test::scratch_dir("check_bins");
  test::FacePairs many = test::face_pairs(10);
  const Bytes rgb = test::pattern_rgb(112, 112);
  many.images[1] = test::encode_png(std::vector<std::uint16_t>(rgb.begin(), rgb.end()), 112, 112,
                                    3, 8);
  many.images[2] = test::encode_bmp(rgb, 112, 112, 24, false);
  many.images[3] = test::encode_jpeg(test::face_rgb(1, 1, 250), 250, 250, 90);
  test::write_verification_bin(dir + "/good.bin", many);
  const auto good = std::make_shared<const VerificationBin>(dir + "/good.bin");
  EXPECT_NO_THROW(check_verification_bins({good}, 112));

  test::write_verification_bin(dir + "/few.bin", test::face_pairs(3));
  const auto few = std::make_shared<const VerificationBin>(dir + "/few.bin");
  EXPECT_NE(usage_error([&] { check_verification_bins({good, few}, 112); })
                .find("verification file '" + dir + "/few.bin': it holds 3 pairs; "
                      "arcface_torch's protocol scores 10 folds of pairs, which needs at least "
                      "10"),
            std::string::npos);

  test::FacePairs broken = test::face_pairs(10);
  broken.images[17] = Bytes(40, 9);
  test::write_verification_bin(dir + "/broken.bin", broken);
  const auto bad = std::make_shared<const VerificationBin>(dir + "/broken.bin");
  const std::string why = usage_error([&] { check_verification_bins({good, bad}, 112); });
  EXPECT_NE(why.find("verification file '" + dir + "/broken.bin': image 17 of 20 does not "
                     "decode"),
            std::string::npos)
      << why;
  // Shared among ranks: each checks its own images, and only the one holding image 17 fails.
  EXPECT_NO_THROW(check_verification_bins({good, bad}, 112, 0, 2));
  EXPECT_THROW(check_verification_bins({good, bad}, 112, 1, 2), UsageError);
}

}  // namespace
}  // namespace pfc
