// The images a face file may hold besides RGB JPEGs decode as mxnet's imdecode (OpenCV)
// decodes them for insightface's loaders: PNG (grey, RGB, RGBA, 16-bit, palette), BMP (24- and
// 32-bit, bottom-up and top-down, 8-bit palette) and CMYK JPEG; a verification image of
// another size is resized as load_bin resizes it (OpenCV's INTER_CUBIC, checked against
// OpenCV's own output), or refused saying why and how to convert it.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>

#include "data/cubic_resize.h"
#include "data/face_image_decoder.h"
#include "support/face_images.h"
#include "support/image_files.h"

namespace pfc {
namespace {

using test::Bytes;

// What the decoder must give for RGB bytes `rgb` of an s x s image: normalised, not flipped.
std::vector<float> normalised(const Bytes& rgb) {
  std::vector<float> out(rgb.size());
  for (std::size_t i = 0; i < rgb.size(); ++i) out[i] = normalise_pixel(rgb[i]);
  return out;
}

std::vector<float> decoded(const Bytes& bytes, int size,
                           OtherSizes other = OtherSizes::refused) {
  FaceImageDecoder decoder(size, other);
  std::vector<float> out(static_cast<std::size_t>(size) * size * 3);
  std::string why;
  EXPECT_TRUE(decoder.decode(bytes, false, out.data(), why)) << why;
  return out;
}

std::string refusal(const Bytes& bytes, int size, OtherSizes other = OtherSizes::refused) {
  FaceImageDecoder decoder(size, other);
  std::vector<float> out(static_cast<std::size_t>(size) * size * 3);
  std::string why;
  EXPECT_FALSE(decoder.decode(bytes, false, out.data(), why));
  return why;
}

TEST(ImageFormats, PngDecodesAsOpenCvDecodesIt) {
  constexpr int kSize = 9;
  const Bytes rgb = test::pattern_rgb(kSize, kSize);
  const std::vector<std::uint16_t> rgb8(rgb.begin(), rgb.end());
  EXPECT_EQ(decoded(test::encode_png(rgb8, kSize, kSize, 3, 8), kSize), normalised(rgb));

  // Grey levels become three equal channels.
  std::vector<std::uint16_t> grey(kSize * kSize);
  Bytes grey_rgb;
  for (int i = 0; i < kSize * kSize; ++i) {
    grey[i] = static_cast<std::uint16_t>(i * 3);
    grey_rgb.insert(grey_rgb.end(), 3, static_cast<std::uint8_t>(i * 3));
  }
  EXPECT_EQ(decoded(test::encode_png(grey, kSize, kSize, 1, 8), kSize), normalised(grey_rgb));

  // Alpha is dropped, not composited: a transparent pixel keeps its colour.
  std::vector<std::uint16_t> rgba;
  for (int i = 0; i < kSize * kSize; ++i) {
    rgba.insert(rgba.end(), {rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]});
    rgba.push_back(static_cast<std::uint16_t>(i % 2 == 0 ? 255 : i));
  }
  // libpng's simplified writer stores un-premultiplied 8-bit RGBA as given.
  EXPECT_EQ(decoded(test::encode_png(rgba, kSize, kSize, 4, 8), kSize), normalised(rgb));

  // 16-bit samples keep their high byte.
  std::vector<std::uint16_t> deep(rgb.size());
  for (std::size_t i = 0; i < rgb.size(); ++i)
    deep[i] = static_cast<std::uint16_t>(rgb[i] * 256 + (i % 256));
  EXPECT_EQ(decoded(test::encode_png(deep, kSize, kSize, 3, 16), kSize), normalised(rgb));

  // A palette's entries.
  const Bytes palette = {10, 20, 30, 200, 100, 0, 0, 255, 128};
  Bytes indices(kSize * kSize), expected;
  for (int i = 0; i < kSize * kSize; ++i) {
    indices[i] = static_cast<std::uint8_t>(i % 3);
    const auto entry = palette.begin() + 3 * (i % 3);
    expected.insert(expected.end(), entry, entry + 3);
  }
  EXPECT_EQ(decoded(test::encode_palette_png(indices, palette, kSize, kSize), kSize),
            normalised(expected));

  Bytes truncated = test::encode_png(rgb8, kSize, kSize, 3, 8);
  truncated.resize(truncated.size() - 20);
  EXPECT_NE(refusal(truncated, kSize).find("PNG damaged"), std::string::npos);
  Bytes header_only(truncated.begin(), truncated.begin() + 12);
  EXPECT_NE(refusal(header_only, kSize).find("not a readable PNG"), std::string::npos);
}

TEST(ImageFormats, BmpDecodesAsOpenCvDecodesIt) {
  constexpr int kWidth = 5;  // rows of 15 bytes, padded to 16 in a 24-bit BMP
  constexpr int kHeight = 5;
  const Bytes rgb = test::pattern_rgb(kWidth, kHeight);
  for (bool top_down : {false, true}) {
    SCOPED_TRACE(top_down ? "top-down" : "bottom-up");
    EXPECT_EQ(decoded(test::encode_bmp(rgb, kWidth, kHeight, 24, top_down), kWidth),
              normalised(rgb));
    EXPECT_EQ(decoded(test::encode_bmp(rgb, kWidth, kHeight, 32, top_down, 0x7F), kWidth),
              normalised(rgb));
  }
  const Bytes palette = {0, 0, 0, 255, 255, 255, 9, 99, 199};
  Bytes indices(kWidth * kHeight), expected;
  for (int i = 0; i < kWidth * kHeight; ++i) {
    indices[i] = static_cast<std::uint8_t>((i * 7) % 3);
    expected.insert(expected.end(), palette.begin() + 3 * indices[i],
                    palette.begin() + 3 * indices[i] + 3);
  }
  EXPECT_EQ(decoded(test::encode_palette_bmp(indices, palette, kWidth, kHeight), kWidth),
            normalised(expected));

  Bytes rle = test::encode_bmp(rgb, kWidth, kHeight, 24, false);
  rle[30] = 1;  // BI_RLE8
  EXPECT_NE(refusal(rle, kWidth).find("BMP of 24 bits per pixel with compression 1 is not read"),
            std::string::npos);
  Bytes cut = test::encode_bmp(rgb, kWidth, kHeight, 24, false);
  cut.resize(cut.size() - 3);
  EXPECT_NE(refusal(cut, kWidth).find("truncated"), std::string::npos);
}

TEST(ImageFormats, CmykJpegIsConvertedAsOpenCvConvertsIt) {
  constexpr int kSize = 16;
  // CMYK (Adobe's inverted convention: 255 is no ink) made from an RGB image, so that the
  // decoded image must come back close to it: c = r, m = g, y = b with k = 255.
  const Bytes rgb = test::pattern_rgb(kSize, kSize);
  Bytes cmyk;
  for (int i = 0; i < kSize * kSize; ++i) {
    cmyk.insert(cmyk.end(), {rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]});
    cmyk.push_back(255);
  }
  const Bytes jpeg = test::encode_cmyk_jpeg(cmyk, kSize, kSize);
  const std::vector<float> got = decoded(jpeg, kSize);
  const std::vector<float> want = normalised(rgb);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::abs(got[i] - want[i])));
  EXPECT_LT(worst, 2.0 * 40 / 255) << "CMYK came back far from the RGB it was made of";
  // OpenCV's arithmetic exactly, on what libjpeg-turbo decodes the file to.
  tjhandle handle = tjInitDecompress();
  Bytes stored(kSize * kSize * 4);
  ASSERT_EQ(tjDecompress2(handle, jpeg.data(), jpeg.size(), stored.data(), kSize, 0, kSize,
                          TJPF_CMYK, 0),
            0);
  tjDestroy(handle);
  Bytes converted;
  for (int i = 0; i < kSize * kSize; ++i) {
    const int k = stored[4 * i + 3];
    for (int c = 0; c < 3; ++c)
      converted.push_back(static_cast<std::uint8_t>(k - ((255 - stored[4 * i + c]) * k >> 8)));
  }
  EXPECT_EQ(got, normalised(converted));
}

// FNV-1a of the bytes: the golden values below are OpenCV 4.14's and 5.0's cv2.resize(src,
// (w, h), interpolation=cv2.INTER_CUBIC) of pattern_rgb, with cv2.ipp.setUseIPP(False) (mxnet
// builds OpenCV without IPP, whose own cubic differs by 1 in a few per cent of the pixels).
std::uint64_t fnv1a(const Bytes& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

TEST(ImageFormats, CubicResizeIsOpenCvsBitForBit) {
  const struct {
    int width, height, to_width, to_height;
    std::uint64_t hash;
    std::uint8_t first[3], middle[3], last[3];
  } cases[] = {
      {250, 250, 112, 112, 0xe76ffc3b21cb132cull, {11, 61, 111}, {103, 163, 113}, {160, 221, 99}},
      // 37 x 3 values a row: its last 5 go through OpenCV's integer loop.
      {90, 100, 37, 41, 0xac6a76d3a824556bull, {13, 63, 113}, {123, 95, 95}, {177, 170, 87}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.width << "x" << c.height);
    RgbImage in;
    in.resize(c.width, c.height);
    in.pixels = test::pattern_rgb(c.width, c.height);
    RgbImage out;
    resize_cubic(in, c.to_width, c.to_height, out);
    ASSERT_EQ(out.pixels.size(), static_cast<std::size_t>(c.to_width) * c.to_height * 3);
    const auto at = [&](int x, int y) {
      const std::uint8_t* p =
          out.pixels.data() + (static_cast<std::size_t>(y) * c.to_width + x) * 3;
      return Bytes(p, p + 3);
    };
    EXPECT_EQ(at(0, 0), Bytes(c.first, c.first + 3));
    EXPECT_EQ(at(c.to_width / 2, c.to_height / 2), Bytes(c.middle, c.middle + 3));
    EXPECT_EQ(at(c.to_width - 1, c.to_height - 1), Bytes(c.last, c.last + 3));
    EXPECT_EQ(fnv1a(out.pixels), c.hash);
  }
  EXPECT_EQ(resize_short_size(250, 250, 112).width, 112);
  EXPECT_EQ(resize_short_size(250, 300, 112).height, 134);
  EXPECT_EQ(resize_short_size(300, 250, 112).width, 134);
  EXPECT_EQ(resize_short_size(250, 251, 112).height, 112);
}

// load_bin: `if img.shape[1] != image_size[0]: img = mx.image.resize_short(img, image_size[0])`
// and the result must be image_size x image_size.
TEST(ImageFormats, VerificationImagesOfAnotherSizeAreResizedAsLoadBinDoes) {
  const Bytes rgb = test::pattern_rgb(250, 250);
  const Bytes png = test::encode_png(std::vector<std::uint16_t>(rgb.begin(), rgb.end()), 250,
                                     250, 3, 8);
  RgbImage in, out;
  in.resize(250, 250);
  in.pixels = rgb;
  resize_cubic(in, 112, 112, out);
  EXPECT_EQ(decoded(png, 112, OtherSizes::resized_as_load_bin), normalised(out.pixels));
  // A JPEG of 250 x 250, as LFW's own images come.
  const Bytes jpeg = test::encode_jpeg(test::face_rgb(3, 1, 250), 250, 250, 90);
  int w = 0, h = 0;
  in.pixels = test::decode_jpeg_rgb(jpeg, w, h);
  resize_cubic(in, 112, 112, out);
  EXPECT_EQ(decoded(jpeg, 112, OtherSizes::resized_as_load_bin), normalised(out.pixels));

  EXPECT_NE(refusal(png, 112).find("image is 250x250, expected 112x112"), std::string::npos);
  const Bytes tall = test::encode_jpeg(test::face_rgb(0, 0, 250), 250, 200, 90);
  const std::string why = refusal(tall, 112, OtherSizes::resized_as_load_bin);
  EXPECT_NE(why.find("image is 250x200, which arcface_torch's load_bin cannot make 112x112 "
                     "either (resizing its shorter side to 112 gives 140x112)"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("crop the images of this file to a square"), std::string::npos) << why;
  const Bytes narrow = test::encode_jpeg(test::face_rgb(0, 0, 112), 112, 96, 90);
  EXPECT_NE(refusal(narrow, 112, OtherSizes::resized_as_load_bin)
                .find("it resizes only images whose width is not 112"),
            std::string::npos);
}

TEST(ImageFormats, WhatIsNoImageSaysWhatItStartsWith) {
  EXPECT_EQ(refusal(Bytes{}, 8), "no image bytes");
  EXPECT_EQ(refusal(Bytes{'G', 'I', 'F', '8', '9', 'a'}, 8),
            "not a JPEG, PNG or BMP image (it starts with 47 49 46 38)");
  // A header announcing more than any face crop is refused before anything is allocated.
  Bytes huge = test::encode_bmp(test::pattern_rgb(2, 2), 2, 2, 24, false);
  huge[18] = 0xFF;
  huge[19] = 0xFF;
  EXPECT_NE(refusal(huge, 8).find("at most 4096 a side"), std::string::npos);
}

}  // namespace
}  // namespace pfc
