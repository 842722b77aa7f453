// pfc_bin_images FILE.bin SIZE OUT.f32: the images of a verification file decoded exactly as
// pfc verify and pfc embed decode them (eval/image_source.h), as raw float32
// [n, 3, SIZE, SIZE] NCHW: the input onnxruntime gets in the learning test, so that only the
// networks are compared, not two JPEG decoders.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "eval/image_source.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s FILE.bin SIZE OUT.f32\n", argv[0]);
    return 2;
  }
  try {
    const std::int64_t size = std::stoll(argv[2]);
    auto bin = std::make_shared<const pfc::VerificationBin>(argv[1]);
    pfc::BinImageSource source(bin, size);
    std::ofstream out(argv[3], std::ios::binary);
    const std::int64_t plane = size * size;
    std::vector<float> hwc(static_cast<std::size_t>(plane * 3)), chw(hwc.size());
    for (std::int64_t i = 0; i < source.size(); ++i) {
      source.decode(i, hwc.data());
      for (std::int64_t c = 0; c < 3; ++c)
        for (std::int64_t p = 0; p < plane; ++p) chw[c * plane + p] = hwc[p * 3 + c];
      out.write(reinterpret_cast<const char*>(chw.data()),
                static_cast<std::streamsize>(chw.size() * sizeof(float)));
    }
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pfc_bin_images: %s\n", e.what());
    return 1;
  }
  return 0;
}
