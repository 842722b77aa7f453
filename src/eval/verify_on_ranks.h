// One verification file through a backbone, the work split over the ranks of a run: the
// images go in fixed batches, batch b to rank b % world, each embedded with its mirror images
// in inference mode and gathered to every rank, where the protocol runs. A batch is the same
// images on any number of ranks, so every rank count computes every embedding alike and
// returns the same result. Collective over comm.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "comm/comm.h"
#include "eval/verification_bin.h"
#include "eval/verification_protocol.h"
#include "model/backbone.h"

namespace pfc {

// Images per forward batch (with their mirror images, twice that); the figures do not depend
// on it, the speed and the memory do (the CPU backend's im2col of r50's first block takes
// 29 MB per image). arcface_torch's callback uses 10.
inline constexpr std::int64_t kVerificationBatch = 16;

// Called on every rank after each of its batches with an estimate of the images the ranks
// have embedded together (this rank's count times the number of ranks).
using VerificationProgress = std::function<void(std::int64_t images_done)>;

VerificationResult verify_on_ranks(Backbone& backbone,
                                   const std::shared_ptr<const VerificationBin>& bin, Comm& comm,
                                   std::int64_t batch_size = kVerificationBatch,
                                   const VerificationProgress& progress = {});

}  // namespace pfc
