#include "support/face_images.h"

#include <fmt/format.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/counter_rng.h"
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

// Uniform numbers of one counter stream, drawn in order.
class Draws {
 public:
  Draws(const char* purpose, int a, int b = 0)
      : key_(stream_key(static_cast<std::uint64_t>(a), purpose, static_cast<std::uint64_t>(b))) {}
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform53(key_, next_++); }
  double normal() { return normal_value(key_, next_++, 1.0); }

 private:
  std::uint64_t key_;
  std::uint64_t next_ = 0;
};

// What makes a person: continuous features, so that identities never trained on differ from
// the trained ones the way new people do. Lengths are fractions of the image size, in a frame
// centred on the face.
struct Person {
  double skin[3], hair[3], iris[3], lips[3];
  double head_rx, head_ry, hairline, eye_dx, eye_y, eye_rx, eye_ry, brow_gap, brow_tilt;
  double brow_dark, nose_length, nose_width, mouth_y, mouth_rx, mouth_ry;

  explicit Person(int identity) {
    Draws d("face_person", identity);
    const double tone = d.uniform(0, 1);
    const double base[3] = {230 - 120 * tone, 195 - 125 * tone, 170 - 120 * tone};
    for (int k = 0; k < 3; ++k) skin[k] = base[k] + d.uniform(-15, 15);
    for (int k = 0; k < 3; ++k) hair[k] = d.uniform(15, 200);
    for (int k = 0; k < 3; ++k) iris[k] = d.uniform(20, 160);
    for (int k = 0; k < 3; ++k)
      lips[k] = skin[k] * (k == 0 ? d.uniform(0.9, 1.1) : d.uniform(0.5, 0.8));
    head_rx = d.uniform(0.25, 0.35);
    head_ry = d.uniform(0.35, 0.45);
    hairline = d.uniform(0.55, 0.85);  // of head_ry above the centre
    eye_dx = d.uniform(0.08, 0.15);
    eye_y = d.uniform(-0.13, -0.03);
    eye_rx = d.uniform(0.05, 0.08);
    eye_ry = d.uniform(0.03, 0.05);
    brow_gap = d.uniform(0.03, 0.07);
    brow_tilt = d.uniform(-0.4, 0.4);
    brow_dark = d.uniform(0.2, 0.8);
    nose_length = d.uniform(0.06, 0.14);
    nose_width = d.uniform(0.02, 0.05);
    mouth_y = d.uniform(0.14, 0.24);
    mouth_rx = d.uniform(0.06, 0.14);
    mouth_ry = d.uniform(0.012, 0.03);
  }

  // The colour at (u, v) of the face frame, or false outside the head.
  bool colour(double u, double v, double c[3]) const {
    if (!inside(u, v, 0, 0, head_rx, head_ry)) return false;
    const auto set = [&](const double* rgb, double mix) {
      for (int k = 0; k < 3; ++k) c[k] = mix * rgb[k] + (1 - mix) * skin[k];
    };
    set(skin, 1);
    if (v < -hairline * head_ry) set(hair, 1);
    for (const double side : {-1.0, 1.0}) {
      const double ex = side * eye_dx;
      if (inside(u, v, ex, eye_y, eye_rx, eye_ry)) {
        const double white[3] = {235, 235, 230};
        set(inside(u, v, ex, eye_y, eye_ry, eye_ry) ? iris : white, 1);
      }
      const double brow_v = eye_y - eye_ry - brow_gap + side * brow_tilt * (u - ex);
      if (std::fabs(u - ex) < eye_rx * 1.2 && std::fabs(v - brow_v) < 0.008) set(hair, brow_dark);
    }
    const double along_nose = (v - eye_y) / nose_length;  // 0 at the eyes, 1 at its tip
    if (along_nose > 0 && along_nose < 1 && std::fabs(u) < nose_width * along_nose)
      for (int k = 0; k < 3; ++k) c[k] *= 0.85;
    if (inside(u, v, 0, mouth_y, mouth_rx, mouth_ry)) set(lips, 1);
    return true;
  }
};

}  // namespace

namespace {

struct RenderedPhoto {
  std::vector<std::uint8_t> rgb;  // [height, width, 3]
  int quality = 95;
};

// Photo `variant` of `identity` at `size`, placed into a width x height canvas: canvas pixel
// (X, Y) shows the photo's scene at the photo pixel `placement` takes there (the scene goes on
// beyond the photo's edges). Drawn with the canvas's own pixel noise.
RenderedPhoto render_photo(int identity, int variant, int size, int width, int height,
                           const PhotoPlacement& placement) {
  const Person person(identity);
  Draws d("face_photo", identity, variant);
  const double s = size;
  const double angle = d.uniform(-12, 12) * M_PI / 180;
  const double scale = d.uniform(0.9, 1.1);
  const double cx = s * (0.5 + d.uniform(-0.06, 0.06)), cy = s * (0.52 + d.uniform(-0.06, 0.06));
  double gain[3], top[3], bottom[3];
  const double brightness = d.uniform(-20, 20);
  for (int k = 0; k < 3; ++k) gain[k] = d.uniform(0.88, 1.12);
  for (int k = 0; k < 3; ++k) top[k] = d.uniform(20, 235);
  for (int k = 0; k < 3; ++k) bottom[k] = d.uniform(20, 235);
  const double light_dir = d.uniform(0, 2 * M_PI), light = d.uniform(0, 0.35);
  const double noise = d.uniform(2, 10);
  RenderedPhoto photo;
  photo.quality = static_cast<int>(d.uniform(40, 96));
  Draws pixel_noise("face_photo_noise", identity, variant);

  const bool in_place = placement.a == 1 && placement.b == 0 && placement.tx == 0 &&
                        placement.ty == 0;
  const double norm = placement.a * placement.a + placement.b * placement.b;
  photo.rgb.resize(static_cast<std::size_t>(width) * height * 3);
  for (int Y = 0; Y < height; ++Y) {
    for (int X = 0; X < width; ++X) {
      // The photo pixel shown here: the inverse of the placement.
      const double ox = X - placement.tx, oy = Y - placement.ty;
      const double x = in_place ? X : (placement.a * ox + placement.b * oy) / norm;
      const double y = in_place ? Y : (-placement.b * ox + placement.a * oy) / norm;
      // Into the face frame: undo the translation, rotation and scale of the photo.
      const double dx = (x - cx) / s, dy = (y - cy) / s;
      const double u = (std::cos(angle) * dx + std::sin(angle) * dy) / scale;
      const double v = (-std::sin(angle) * dx + std::cos(angle) * dy) / scale;
      double c[3];
      if (person.colour(u, v, c)) {
        const double shade = 1 + light * (std::cos(light_dir) * u + std::sin(light_dir) * v) * 3;
        for (int k = 0; k < 3; ++k) c[k] *= shade;
      } else {
        for (int k = 0; k < 3; ++k) c[k] = top[k] + (bottom[k] - top[k]) * y / s;
      }
      std::uint8_t* px = &photo.rgb[(static_cast<std::size_t>(Y) * width + X) * 3];
      for (int k = 0; k < 3; ++k)
        px[k] = clamp_byte(gain[k] * c[k] + brightness + noise * pixel_noise.normal());
    }
  }
  return photo;
}

}  // namespace

std::vector<std::uint8_t> face_photo_jpeg(int identity, int variant, int size) {
  const RenderedPhoto photo = render_photo(identity, variant, size, size, size, PhotoPlacement{});
  return encode_jpeg(photo.rgb, size, size, photo.quality);
}

LooseCrop face_loose_crop(int identity, int variant, int size, int width, int height,
                          const PhotoPlacement& placement) {
  const RenderedPhoto photo = render_photo(identity, variant, size, width, height, placement);
  LooseCrop crop;
  crop.jpeg = encode_jpeg(photo.rgb, width, height, photo.quality);
  crop.width = width;
  crop.height = height;
  // arcface's template at 112, scaled to the photo.
  static constexpr double kTemplate[5][2] = {{38.2946, 51.6963}, {73.5318, 51.5014},
                                             {56.0252, 71.7366}, {41.5493, 92.3655},
                                             {70.7299, 92.2041}};
  for (int p = 0; p < 5; ++p) {
    const double x = kTemplate[p][0] * size / 112.0, y = kTemplate[p][1] * size / 112.0;
    const auto at = static_cast<std::size_t>(2 * p);
    crop.landmarks[at] = placement.a * x - placement.b * y + placement.tx;
    crop.landmarks[at + 1] = placement.b * x + placement.a * y + placement.ty;
  }
  return crop;
}

void write_face_photo_folder(const std::string& dir, int first, int identities,
                             int per_identity, int size) {
  namespace fs = std::filesystem;
  for (int id = first; id < first + identities; ++id) {
    const fs::path folder = fs::path(dir) / fmt::format("id_{:05d}", id);
    fs::create_directories(folder);
    for (int v = 0; v < per_identity; ++v)
      write_file((folder / fmt::format("img_{:02d}.jpg", v)).string(),
                 face_photo_jpeg(id, v, size));
  }
}

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
