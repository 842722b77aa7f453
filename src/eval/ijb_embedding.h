// The image features of an IJB list, the work split over the ranks of a run: the images go
// in fixed batches, batch b to rank b % world (as eval/verify_on_ranks.h shares a .bin), each
// image embedded with its mirror image in inference mode. The ranks send each round of
// `world` batches to rank 0, in image order, as features: embedding + mirror image's
// embedding, added in f32 as eval_ijbc.py adds them. A batch is the same images on any
// number of ranks, so every rank count gives the same features. Collective over comm.
#pragma once

#include <cstdint>
#include <functional>

#include "comm/comm.h"
#include "eval/ijb_image_source.h"
#include "model/backbone.h"

namespace pfc {

// On rank 0: host rows [n, emb] f32, the features of images [first, first + n).
using FeatureRows = std::function<void(std::int64_t first, const Tensor& rows)>;
// On every rank after each round: about how many images the ranks have embedded together.
using ImagesDone = std::function<void(std::int64_t images)>;

// This rank's batches of the list.
std::vector<ImageRange> rank_batches(std::int64_t images, std::int64_t batch_size,
                                     const Comm& comm);

// Embeds every image; every round the ranks also agree whether one of them was asked to stop
// (SIGTERM, SIGUSR1: core/stop_signals.h), and if so all throw pfc::Error together.
void embed_ijb_images(Backbone& backbone, IjbImageSource& source, Comm& comm,
                      std::int64_t batch_size, const FeatureRows& rows,
                      const ImagesDone& progress);

}  // namespace pfc
