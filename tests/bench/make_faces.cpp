// pfc_make_faces DIR IDENTITIES PER_IDENTITY [SIZE] [--photos FIRST]: writes
// DIR/id_NNN/img_NN.jpg, small synthetic face JPEGs for `pfc pack` (the integration tests use
// it; python3 may lack PIL). With --photos, DIR/id_NNNNN/img_NN.jpg are photos of identities
// FIRST, FIRST + 1, ... with the variation of real photos (support/face_images.h), for the
// learning test: training identities from 0, verification identities from elsewhere.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "support/face_images.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  int photos_from = -1;
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--photos") {
      photos_from = std::stoi(args[i + 1]);
      args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
      break;
    }
  }
  if (args.size() < 3 || args.size() > 4) {
    std::fprintf(stderr, "usage: %s DIR IDENTITIES PER_IDENTITY [SIZE=112] [--photos FIRST]\n",
                 argv[0]);
    return 2;
  }
  try {
    const int identities = std::stoi(args[1]);
    const int per_identity = std::stoi(args[2]);
    const int size = args.size() == 4 ? std::stoi(args[3]) : 112;
    if (photos_from >= 0) {
      pfc::test::write_face_photo_folder(args[0], photos_from, identities, per_identity, size);
    } else {
      pfc::test::write_face_folder(args[0], identities, per_identity, size);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pfc_make_faces: %s\n", e.what());
    return 1;
  }
  return 0;
}
