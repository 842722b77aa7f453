// The line `pfc train` logs every `frequent` steps. The seed's fields come first, in the
// seed's order (so that parsers of "Training: Speed … Global Step: N" keep matching), then
// what arcface_torch adds: the loss scale in fp16 runs and the estimated hours left. The
// learning rate has arcface_torch's six decimals, enough for the end of a schedule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pfc {

struct Progress {
  double samples_per_s = 0;
  double loss = 0;
  double lr = 0;
  std::int64_t epoch = 0;
  std::int64_t step = 0;
  std::optional<double> loss_scale;  // fp16 runs only
  double hours_left = 0;
};

// "Training: Speed 5299.56 samples/sec   Loss 1.0965   LearningRate 0.200000   Epoch: 0   "
// "Global Step: 100   Fp16 Grad Scale: 65536   Required: 19 hours"
std::string progress_line(const Progress& p);

// arcface_torch's estimate: the mean time of the steps this process has trained so far times
// the steps left (0 before any step).
double hours_left(double seconds_training, std::int64_t steps_trained, std::int64_t steps_left);

}  // namespace pfc
