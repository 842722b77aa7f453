// OpenCV's cv::resize with INTER_CUBIC for 8-bit RGB images, bit for bit as mxnet's wheels run
// it (OpenCV 3.4 built without IPP, SSE2): what arcface_torch's eval/verification.py load_bin
// applies through mx.image.resize_short (interp=2, cubic) to a verification image whose width
// is not the network's. The kernel is Keys' cubic with A = -0.75 on pixel centres
// ((d + 0.5) * src / dst - 0.5), coefficients in 11-bit fixed point, borders replicated; the
// horizontal pass sums in integers, the vertical one in float32 (OpenCV's SSE2 path) rounded
// to nearest even, with integer arithmetic for the last width % 8 values of a row.
#pragma once

#include "data/rgb_image.h"

namespace pfc {

void resize_cubic(const RgbImage& in, int width, int height, RgbImage& out);

// mx.image.resize_short's target: the shorter side to `size`, the longer one scaled with
// integer division; {width, height}.
struct ImageSize {
  int width = 0;
  int height = 0;
};
ImageSize resize_short_size(int width, int height, int size);

}  // namespace pfc
