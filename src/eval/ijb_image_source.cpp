#include "eval/ijb_image_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "core/stop_signals.h"

namespace pfc {

IjbImageSource::IjbImageSource(const IjbFiles& files, const IjbImages& images,
                               std::int64_t image_size, std::int64_t batch_size, int threads)
    : files_(files), images_(images), image_size_(image_size), batch_size_(batch_size) {
  PFC_CHECK(batch_size > 0 && threads > 0, "batch size {} and {} threads", batch_size, threads);
  croppers_.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) croppers_.push_back(std::make_unique<FaceCropper>(image_size));
  crops_.resize(static_cast<std::size_t>(batch_size * image_size * image_size * 3));
  errors_.resize(static_cast<std::size_t>(batch_size));
}

std::string IjbImageSource::describe(std::int64_t i) const {
  return fmt::format("'{}' (line {} of '{}')",
                     (std::filesystem::path(files_.loose_crop) /
                      images_.names.at(static_cast<std::size_t>(i)))
                         .string(),
                     i + 1, files_.name_5pts_score);
}

void IjbImageSource::prepare(std::int64_t begin, std::int64_t end) {
  PFC_CHECK(end - begin <= batch_size_, "{} images in a batch of {}", end - begin, batch_size_);
  const auto pixels = static_cast<std::size_t>(image_size_ * image_size_ * 3);
  std::atomic<std::int64_t> next{begin};
  const auto work = [&](FaceCropper& cropper) {
    for (std::int64_t i = next++; i < end; i = next++) {
      const auto slot = static_cast<std::size_t>(i - begin);
      const auto at = static_cast<std::size_t>(i);
      const std::string path =
          (std::filesystem::path(files_.loose_crop) / images_.names[at]).string();
      errors_[slot].clear();
      // An exception must not leave a helper thread (that would abort the process): it is
      // this image's failure.
      try {
        if (!cropper.crop(path, images_.to_crop[at], crops_.data() + slot * pixels,
                          errors_[slot]) &&
            errors_[slot].empty())
          errors_[slot] = "does not decode";
      } catch (const std::exception& e) {
        errors_[slot] = e.what();
      }
    }
  };
  const auto threads =
      std::min<std::size_t>(croppers_.size(), static_cast<std::size_t>(end - begin));
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work, std::ref(*croppers_[t]));
  work(*croppers_[0]);
  for (std::thread& helper : helpers) helper.join();
  prepared_begin_ = begin;
  prepared_end_ = end;
}

std::string IjbImageSource::failure(std::int64_t i) const {
  return fmt::format("image {}: {}", describe(i),
                     errors_[static_cast<std::size_t>(i - prepared_begin_)]);
}

void IjbImageSource::decode(std::int64_t i, float* out) {
  if (i < prepared_begin_ || i >= prepared_end_)
    prepare(i, std::min(size(), i + batch_size_));
  const auto slot = static_cast<std::size_t>(i - prepared_begin_);
  if (!errors_[slot].empty()) throw UsageError(failure(i));
  const std::int64_t pixels = image_size_ * image_size_ * 3;
  const std::uint8_t* crop = crops_.data() + slot * static_cast<std::size_t>(pixels);
  for (std::int64_t k = 0; k < pixels; ++k) out[k] = normalise_pixel(crop[k]);
}

void IjbImageSource::check(const std::vector<ImageRange>& ranges) {
  std::string first;
  std::int64_t failed = 0;
  for (const ImageRange& range : ranges) {
    for (std::int64_t begin = range.begin; begin < range.end; begin += batch_size_) {
      // IJB-C's check takes minutes on a few cores: a scheduler's SIGTERM ends it here.
      if (stop_requested())
        throw Error("stopped by a signal while the images were checked; nothing was written");
      prepare(begin, std::min(range.end, begin + batch_size_));
      for (std::int64_t i = begin; i < prepared_end_; ++i) {
        if (errors_[static_cast<std::size_t>(i - begin)].empty()) continue;
        if (failed++ == 0) first = failure(i);
      }
    }
  }
  prepared_end_ = prepared_begin_;  // nothing kept
  if (failed == 1) throw UsageError(first);
  if (failed > 1)
    throw UsageError(fmt::format("{} (and {} more images fail)", first, failed - 1));
}

}  // namespace pfc
