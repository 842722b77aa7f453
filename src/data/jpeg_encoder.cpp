#include "data/jpeg_encoder.h"

#include <fmt/format.h>
#include <turbojpeg.h>

#include "core/error.h"

namespace pfc {

JpegEncoder::JpegEncoder() : handle_(tjInitCompress()) {
  PFC_CHECK(handle_ != nullptr, "libjpeg-turbo: cannot create a compressor: {}",
            tjGetErrorStr2(nullptr));
}

JpegEncoder::~JpegEncoder() { tjDestroy(static_cast<tjhandle>(handle_)); }

std::vector<std::uint8_t> JpegEncoder::encode(const std::uint8_t* rgb, int width, int height,
                                              int quality) {
  auto* handle = static_cast<tjhandle>(handle_);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(handle, rgb, width, 0, height, TJPF_RGB, &out, &size, TJSAMP_420,
                             quality, TJFLAG_ACCURATEDCT);
  std::vector<std::uint8_t> jpeg;
  if (rc == 0) jpeg.assign(out, out + size);
  tjFree(out);
  if (rc != 0) throw Error(fmt::format("libjpeg-turbo cannot encode: {}", tjGetErrorStr2(handle)));
  return jpeg;
}

}  // namespace pfc
