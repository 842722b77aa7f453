// pfc_align_faces LIST SIZE OUT: aligns photos as `pfc ijb` and `pfc pack --landmarks` do
// (data/face_align.h, data/face_cropper.h), for comparing them with OpenCV and scikit-image.
// LIST holds lines `path x1 y1 ... x5 y5`; each landmark is rounded to f32 first, as
// eval_ijbc.py holds them. Writes OUT.rgb, the crops [lines, SIZE, SIZE, 3] RGB bytes, and
// OUT.txt, each line's transform (m0 ... m5, 17 digits).
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "data/face_cropper.h"
#include "data/field_file.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s LIST SIZE OUT\n", argv[0]);
    return 2;
  }
  try {
    const int size = std::stoi(argv[2]);
    pfc::FieldFile list(argv[1], "list");
    pfc::FaceCropper cropper(size);
    const pfc::FivePoints crop_points = pfc::arcface_template(size);
    std::ofstream crops(std::string(argv[3]) + ".rgb", std::ios::binary);
    std::ofstream transforms(std::string(argv[3]) + ".txt");
    std::vector<std::uint8_t> crop(static_cast<std::size_t>(size * size * 3));
    while (list.next()) {
      list.expect_fields(11, "path x1 y1 ... x5 y5");
      pfc::FivePoints points{};
      for (std::size_t k = 0; k < 10; ++k)
        points[k / 2][k % 2] = static_cast<float>(list.number(1 + k, "landmark"));
      pfc::AffineMatrix m{};
      std::string why;
      if (!pfc::fit_similarity(points, crop_points, m, why) ||
          !cropper.crop(std::string(list.fields()[0]), m, crop.data(), why))
        list.fail(why);
      crops.write(reinterpret_cast<const char*>(crop.data()),
                  static_cast<std::streamsize>(crop.size()));
      transforms << fmt::format("{:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g}\n", m[0], m[1],
                                m[2], m[3], m[4], m[5]);
    }
    if (!crops || !transforms) throw std::runtime_error("cannot write the output files");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pfc_align_faces: %s\n", e.what());
    return 1;
  }
  return 0;
}
