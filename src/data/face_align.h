// Face alignment as insightface prepares faces for arcface models (face_align.norm_crop, and
// eval_ijbc.py's Embedding.get): a similarity transform fitted by least squares to five
// landmarks (skimage's SimilarityTransform.estimate, Umeyama's method) onto arcface's
// template, then OpenCV's warpAffine with bilinear interpolation and a zero border, in the
// fixed-point arithmetic OpenCV uses for 8-bit images (5-bit sub-pixel positions, 15-bit
// weights), so that a crop comes out as insightface's own tools made the crops its published
// results were measured on.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace pfc {

// Five points (x, y) in pixels, in insightface's order: left eye, right eye, nose tip, left
// and right mouth corner (left and right as seen in the image). Pixel centres are at integer
// coordinates, as OpenCV counts them.
using FivePoints = std::array<std::array<double, 2>, 5>;

// A 2x3 affine map: (x, y) -> (m[0] x + m[1] y + m[2], m[3] x + m[4] y + m[5]).
using AffineMatrix = std::array<double, 6>;

// Where arcface's crops put the five points in an image_size x image_size crop. At 112 it is
// insightface's arcface_dst, (38.2946, 51.6963) (73.5318, 51.5014) (56.0252, 71.7366)
// (41.5493, 92.3655) (70.7299, 92.2041); a multiple of 112 scales it, and a multiple of 128
// that is not one of 112 takes insightface's rule for 128 (scaled by image_size / 128 and
// moved right by 8 of those units), as face_align.estimate_norm does. Any other size scales
// the 112 template by image_size / 112. The points are f32 values, as insightface's are.
FivePoints arcface_template(std::int64_t image_size);

// The similarity (rotation, uniform scale and translation; no reflection) that maps `from`
// onto `to` with the least squared error: Umeyama's solution, in two dimensions a closed form
// (below). False, with the reason in `why`, when a point is not finite or the points of
// `from` all coincide, so that no transform exists.
bool fit_similarity(const FivePoints& from, const FivePoints& to, AffineMatrix& out,
                    std::string& why);

// dst [dst_height, dst_width, channels] = src [src_height, src_width, channels] moved by `m`
// (source to destination coordinates), exactly as cv2.warpAffine(src, m, (dst_width,
// dst_height)) computes it for 8-bit images with its defaults (INTER_LINEAR, BORDER_CONSTANT
// with 0) in OpenCV before 4.11; OpenCV 4.11 and later interpolate 8-bit images in f32, which
// differs from this by at most one grey level on some pixels.
void warp_affine_bilinear(const std::uint8_t* src, int src_width, int src_height, int channels,
                          const AffineMatrix& m, std::uint8_t* dst, int dst_width,
                          int dst_height);

}  // namespace pfc
