// pfc_make_faces DIR IDENTITIES PER_IDENTITY [SIZE]: writes DIR/id_NNN/img_NN.jpg, small
// synthetic face JPEGs for `pfc pack` (the integration tests use it; python3 may lack PIL).
#include <cstdio>
#include <exception>
#include <string>

#include "support/face_images.h"

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: %s DIR IDENTITIES PER_IDENTITY [SIZE=112]\n", argv[0]);
    return 2;
  }
  try {
    const int identities = std::stoi(argv[2]);
    const int per_identity = std::stoi(argv[3]);
    const int size = argc == 5 ? std::stoi(argv[4]) : 112;
    pfc::test::write_face_folder(argv[1], identities, per_identity, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pfc_make_faces: %s\n", e.what());
    return 1;
  }
  return 0;
}
