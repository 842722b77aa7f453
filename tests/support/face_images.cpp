#include "support/face_images.h"

#include <fmt/format.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "data/dataset_packer.h"

namespace pfc::test {

namespace {

std::uint8_t clamp_byte(double v) {
  return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
}

// Inside an ellipse centred at (cx, cy) with radii (rx, ry), in pixel units.
bool inside(double x, double y, double cx, double cy, double rx, double ry) {
  const double dx = (x - cx) / rx;
  const double dy = (y - cy) / ry;
  return dx * dx + dy * dy <= 1.0;
}

}  // namespace

std::vector<std::uint8_t> face_rgb(int identity, int variant, int size) {
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(size) * size * 3);
  const double s = size;
  const double skin[3] = {150.0 + 13 * (identity % 7), 110.0 + 17 * (identity % 5),
                          90.0 + 11 * (identity % 3)};
  const double head_rx = s * (0.30 + 0.02 * (identity % 4));
  const double head_ry = s * (0.40 + 0.015 * (identity % 3));
  const double shift = s * 0.02 * ((variant % 5) - 2);
  const double light = 0.25 * std::cos(0.9 * variant + identity);
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) {
      const double gx = x / s;
      const double gy = y / s;
      const double cx = s / 2 + shift;
      double c[3] = {40 + 60 * gy, 60 + 40 * gx, 90 + 50 * (1 - gy)};  // background
      if (inside(x, y, cx, s * 0.52, head_rx, head_ry)) {
        const double shade = 1.0 + light * (gx - 0.5) - 0.2 * (gy - 0.5) * (gy - 0.5);
        for (int k = 0; k < 3; ++k) c[k] = skin[k] * shade;
        const double eye_y = s * (0.42 + 0.01 * (identity % 3));
        const double eye_dx = s * (0.11 + 0.01 * (identity % 2));
        if (inside(x, y, cx - eye_dx, eye_y, s * 0.05, s * 0.03) ||
            inside(x, y, cx + eye_dx, eye_y, s * 0.05, s * 0.03))
          c[0] = c[1] = c[2] = 30 + 10 * (identity % 4);
        if (inside(x, y, cx, s * 0.70, s * (0.10 + 0.01 * (variant % 3)), s * 0.025)) {
          c[0] = 170;
          c[1] = 60;
          c[2] = 70;
        }
      }
      std::uint8_t* px = &rgb[(static_cast<std::size_t>(y) * size + x) * 3];
      for (int k = 0; k < 3; ++k) px[k] = clamp_byte(c[k]);
    }
  }
  return rgb;
}

std::vector<std::uint8_t> encode_jpeg(const std::vector<std::uint8_t>& rgb, int width, int height,
                                      int quality) {
  tjhandle handle = tjInitCompress();
  if (!handle) throw std::runtime_error("tjInitCompress failed");
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  const int rc = tjCompress2(handle, rgb.data(), width, 0, height, TJPF_RGB, &out, &out_size,
                             TJSAMP_420, quality, TJFLAG_ACCURATEDCT);
  const std::string error = rc == 0 ? "" : tjGetErrorStr2(handle);
  std::vector<std::uint8_t> jpeg;
  if (rc == 0) jpeg.assign(out, out + out_size);
  tjFree(out);
  tjDestroy(handle);
  if (rc != 0) throw std::runtime_error("tjCompress2 failed: " + error);
  return jpeg;
}

std::vector<std::uint8_t> decode_jpeg_rgb(const std::vector<std::uint8_t>& jpeg, int& width,
                                          int& height) {
  tjhandle handle = tjInitDecompress();
  int subsampling = 0;
  int colorspace = 0;
  std::vector<std::uint8_t> rgb;
  bool ok = tjDecompressHeader3(handle, jpeg.data(), jpeg.size(), &width, &height, &subsampling,
                                &colorspace) == 0;
  if (ok) {
    rgb.resize(static_cast<std::size_t>(width) * height * 3);
    ok = tjDecompress2(handle, jpeg.data(), jpeg.size(), rgb.data(), width, 0, height, TJPF_RGB,
                       0) == 0;
  }
  const std::string error = ok ? "" : tjGetErrorStr2(handle);
  tjDestroy(handle);
  if (!ok) throw std::runtime_error("direct JPEG decode failed: " + error);
  return rgb;
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_face_folder(const std::string& dir, int identities, int per_identity, int size) {
  namespace fs = std::filesystem;
  for (int id = 0; id < identities; ++id) {
    const fs::path folder = fs::path(dir) / fmt::format("id_{:03d}", id);
    fs::create_directories(folder);
    for (int v = 0; v < per_identity; ++v)
      write_file((folder / fmt::format("img_{:02d}.jpg", v)).string(),
                 encode_jpeg(face_rgb(id, v, size), size, size, 95));
  }
}
std::string make_face_dataset(const std::string& dir, int identities, int per_identity) {
  namespace fs = std::filesystem;
  const std::string faces = (fs::path(dir) / "faces").string();
  const std::string dataset = (fs::path(dir) / "dataset").string();
  write_face_folder(faces, identities, per_identity, 112);
  pack_image_folder(faces, (fs::path(dataset) / "train").string(), 112);
  return dataset;
}

}  // namespace pfc::test
