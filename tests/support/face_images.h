// Small face-like JPEGs for the data tests, the pack integration test and the decode
// benchmark: smooth gradients with a head ellipse, eyes and a mouth whose colours and
// placement depend on the identity, and lighting that depends on the image. And, for the
// learning test, "photos": faces of many identities drawn from continuous features, each
// photo with the variation real photos of one person have.
#pragma once

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
