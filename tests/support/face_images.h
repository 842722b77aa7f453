// Small face-like JPEGs for the data tests, the pack integration test and the decode
// benchmark: smooth gradients with a head ellipse, eyes and a mouth whose colours and
// placement depend on the identity, and lighting that depends on the image. And, for the
// learning test, "photos": faces of many identities drawn from continuous features, each
// photo with the variation real photos of one person have.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace pfc::test {

// RGB bytes [size, size, 3] of image `variant` of identity `identity`.
std::vector<std::uint8_t> face_rgb(int identity, int variant, int size);
// A JPEG of `rgb` (width x height x 3) at `quality` with 4:2:0 chroma, as face datasets use.
std::vector<std::uint8_t> encode_jpeg(const std::vector<std::uint8_t>& rgb, int width, int height,
                                      int quality);
// RGB bytes of a JPEG decoded directly by libjpeg-turbo (the reference for read-back tests).
std::vector<std::uint8_t> decode_jpeg_rgb(const std::vector<std::uint8_t>& jpeg, int& width,
                                          int& height);
// Photo `variant` of identity `identity` (any number: identities are drawn from counter
// streams, so ones never trained on can be made): skin, head shape, hair, eyes, brows, nose
// and mouth are the identity's; position (+-8 %), scale (0.85-1.15), rotation (+-15 degrees),
// colour cast and brightness, background, lighting, sensor noise and the JPEG quality
// (40-95) are the photo's. Returns the JPEG.
std::vector<std::uint8_t> face_photo_jpeg(int identity, int variant, int size);
// A similarity that places a photo into a larger canvas: photo pixel (x, y) goes to
// (a x - b y + tx, b x + a y + ty). The default leaves it where it is.
struct PhotoPlacement {
  double a = 1, b = 0, tx = 0, ty = 0;
};
// A loose crop, as IJB-B/C hold faces: a JPEG of the whole canvas and the face's five
// landmarks (x1 y1 ... x5 y5, in insightface's order) in it.
struct LooseCrop {
  std::vector<std::uint8_t> jpeg;
  int width = 0, height = 0;
  std::array<double, 10> landmarks{};
};
// Photo `variant` of `identity` (face_photo_jpeg's photo at `size`, its scene continued beyond
// its edges) placed into a width x height canvas. The photos are this synthetic world's
// aligned faces, as the training photos of real datasets are: a face's landmarks are where
// arcface's template (scaled by size / 112) lies in its photo, moved by the placement, so
// that aligning the crop by them gives back the photo.
LooseCrop face_loose_crop(int identity, int variant, int size, int width, int height,
                          const PhotoPlacement& placement);
// Writes DIR/id_NNNNN/img_NN.jpg: photos of identities first .. first + identities - 1.
void write_face_photo_folder(const std::string& dir, int first, int identities,
                             int per_identity, int size);
// Writes DIR/id_NNN/img_NN.jpg for `identities` x `per_identity` faces of size x size.
void write_face_folder(const std::string& dir, int identities, int per_identity, int size);
void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes);
std::vector<std::uint8_t> read_file(const std::string& path);
// Writes DIR/faces (as write_face_folder, 112x112) and packs it into DIR/dataset/train.*;
// returns DIR/dataset, a folder for `rec =`.
std::string make_face_dataset(const std::string& dir, int identities, int per_identity);

}  // namespace pfc::test
