#include "eval/check_verification_bins.h"

#include <fmt/format.h>

#include "core/error.h"
#include "eval/image_source.h"
#include "eval/verification_protocol.h"

namespace pfc {

void check_verification_bins(const std::vector<std::shared_ptr<const VerificationBin>>& bins,
                             std::int64_t image_size, int rank, int world_size) {
  for (const auto& bin : bins)
    if (bin->pairs() < kVerificationFolds)
      throw UsageError(fmt::format("verification file '{}': it holds {} pair{}; arcface_torch's "
                                   "protocol scores {} folds of pairs, which needs at least {}",
                                   bin->path(), bin->pairs(), bin->pairs() == 1 ? "" : "s",
                                   kVerificationFolds, kVerificationFolds));
  std::vector<float> image(static_cast<std::size_t>(image_size * image_size * 3));
  for (const auto& bin : bins) {
    BinImageSource source(bin, image_size);
    for (std::int64_t i = rank; i < source.size(); i += world_size) source.decode(i, image.data());
  }
}

}  // namespace pfc
