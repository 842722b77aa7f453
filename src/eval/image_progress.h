// A progress line for long passes over many images (`pfc embed`, `pfc verify`): "embedded
// 1200 of 12000 images (10.0 %), 85.3 images/s, 127 s left", logged at most every 10 seconds
// and once at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace pfc {

class ImageProgress {
 public:
  // `what` starts the line ("embedded", "verified lfw:").
  ImageProgress(std::string what, std::int64_t total);
  void update(std::int64_t done);

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  std::int64_t total_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = Clock::now();
};

}  // namespace pfc
