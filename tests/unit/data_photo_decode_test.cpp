// FaceImageDecoder::decode_photo, the decoder of photos of any size that are aligned afterwards
// (pfc ijb's loose crops, pfc pack --landmarks' raw photos): the size and pixels of a photo
// that is not square, and the decoder's recovery after a stream it refused - the next good
// image decodes, through either entry point.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "data/face_image_decoder.h"
#include "support/face_images.h"

namespace pfc {
namespace {

std::vector<std::uint8_t> gradient(int width, int height) {
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width * height * 3));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        rgb[static_cast<std::size_t>((y * width + x) * 3 + c)] =
            static_cast<std::uint8_t>((x * 255 / width + y * 100 / height + 40 * c) % 256);
  return rgb;
}

TEST(PhotoDecode, AnySizeComesBackWithItsPixels) {
  const int width = 151, height = 97;
  const std::vector<std::uint8_t> rgb = gradient(width, height);
  FaceImageDecoder decoder(112);
  RgbImage out;
  std::string why;
  ASSERT_TRUE(decoder.decode_photo(test::encode_jpeg(rgb, width, height, 95), out, why)) << why;
  EXPECT_EQ(out.width, width);
  EXPECT_EQ(out.height, height);
  ASSERT_EQ(out.pixels.size(), rgb.size());
  double error = 0;
  for (std::size_t i = 0; i < rgb.size(); ++i)
    error += std::abs(int(out.pixels[i]) - int(rgb[i]));
  EXPECT_LT(error / static_cast<double>(rgb.size()), 4.0);  // JPEG at quality 95
}

TEST(PhotoDecode, AGoodImageDecodesAfterARefusedOne) {
  const std::vector<std::uint8_t> good = test::encode_jpeg(test::face_rgb(1, 0, 112), 112, 112, 90);
  // Cut inside the header: libjpeg-turbo fails there, which used to leave the next header
  // read as 0 x 0.
  const std::vector<std::uint8_t> cut(good.begin(), good.begin() + 300);
  FaceImageDecoder decoder(112);
  std::vector<float> image(112 * 112 * 3);
  RgbImage photo;
  std::string why;
  for (int round = 0; round < 2; ++round) {
    EXPECT_FALSE(decoder.decode(cut, false, image.data(), why));
    EXPECT_TRUE(decoder.decode(good, false, image.data(), why)) << why;
    EXPECT_FALSE(decoder.decode_photo(cut, photo, why));
    EXPECT_TRUE(decoder.decode_photo(good, photo, why)) << why;
    EXPECT_EQ(photo.width, 112);
  }
}

}  // namespace
}  // namespace pfc
