// From image features to pair scores, as arcface_torch's eval_ijbc.py computes them in its
// default mode (flip test "F2", norm score "N1", detector score "D1"): an image's feature is
// its embedding plus its mirror image's, not normalised, times its faceness score; a
// template's feature is the sum over its medias of the mean over each media's images,
// L2-normalised (a zero feature stays zero, as sklearn's normalize leaves it); a pair's score
// is the dot product of its two templates' features. The pooling is numpy's f32 arithmetic in
// numpy's order, the normalisation and the scores f64, as in the script.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "eval/ijb_protocol.h"

namespace pfc {

// [templates, emb] row-major, in the order of images.templates. `features` holds [images, emb]
// flip-summed image features, before the faceness score.
std::vector<double> template_features(std::span<const float> features, std::int64_t emb,
                                      const IjbImages& images);

// How many templates hold no weight: every faceness score of their images is 0, so their
// feature is zero and every pair with one of them scores 0.
std::int64_t weightless_templates(const IjbImages& images);

// scores[p - begin] for the pairs p in [begin, end): a block at a time, so that scoring needs
// no more memory than the block's scores whatever the number of pairs.
void score_pairs(std::span<const double> templates, std::int64_t emb, const IjbPairs& pairs,
                 std::int64_t begin, std::int64_t end, std::span<double> scores);

}  // namespace pfc
