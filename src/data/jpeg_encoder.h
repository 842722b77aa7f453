// RGB bytes -> a JPEG, as face datasets store their aligned crops (insightface's im2rec
// writes quality 95 with 4:2:0 chroma, OpenCV's imencode defaults). One per thread: it owns
// a TurboJPEG compressor.
#pragma once

#include <cstdint>
#include <vector>

namespace pfc {

class JpegEncoder {
 public:
  JpegEncoder();
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;

  // rgb: [height, width, 3]. Throws pfc::Error with libjpeg-turbo's reason on failure.
  std::vector<std::uint8_t> encode(const std::uint8_t* rgb, int width, int height,
                                   int quality = 95);

 private:
  void* handle_;  // tjhandle
};

}  // namespace pfc
