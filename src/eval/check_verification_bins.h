// What a verification needs of its files, checked before the first forward, so that a bad
// file is reported at start-up and never after hours of training or of other files' work:
// enough pairs for the protocol's folds, and every image decoding at the network's size
// (resized as arcface_torch's load_bin resizes, or refused saying how to convert it).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "eval/verification_bin.h"

namespace pfc {

// Throws a UsageError naming the file (and the image). The images are shared among the ranks
// of a run: this call checks those i with i % world_size == rank, every file's pair count on
// every rank.
void check_verification_bins(const std::vector<std::shared_ptr<const VerificationBin>>& bins,
                             std::int64_t image_size, int rank = 0, int world_size = 1);

}  // namespace pfc
