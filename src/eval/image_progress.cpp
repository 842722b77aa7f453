#include "eval/image_progress.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace pfc {

namespace {
constexpr auto kInterval = std::chrono::seconds(10);
}  // namespace

ImageProgress::ImageProgress(std::string what, std::int64_t total)
    : what_(std::move(what)), total_(total) {}

void ImageProgress::update(std::int64_t done) {
  const auto now = Clock::now();
  if (done < total_ && now - last_ < kInterval) return;
  last_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = static_cast<double>(done) / std::max(seconds, 1e-9);
  spdlog::info("{} {} of {} images ({:.1f} %), {:.1f} images/s{}", what_, done, total_,
               100.0 * static_cast<double>(done) / static_cast<double>(total_), rate,
               done < total_
                   ? fmt::format(", {:.0f} s left", static_cast<double>(total_ - done) / rate)
                   : fmt::format(", {:.1f} s", seconds));
}

}  // namespace pfc
