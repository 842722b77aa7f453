// arcface_torch's CallBackVerification in `pfc train`: the val_targets files <rec>/<name>.bin
// read and checked at start-up; every `verbose` steps and after the last step each is
// verified with the training backbone in inference mode (the work split over the ranks), the
// leader logging arcface_torch's lines (stdout and training.log) ([lfw][2000]XNorm: ..., Accuracy-Flip: ...+-...,
// Accuracy-Highest: ...) and appending a row to metrics.h5's /verification/<name>.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "comm/comm.h"
#include "config/config.h"
#include "core/fault_injection.h"
#include "eval/verification_bin.h"
#include "io/metrics_writer.h"
#include "model/backbone.h"

namespace pfc {

class VerificationCallback {
 public:
  // Reads every target and checks it (check_verification_bins: enough pairs, every image
  // decoding, every rank a share), so that a missing, unreadable or too small target stops
  // the run now, not thousands of steps later: a UsageError naming the file and the image.
  // Collective over comm.
  VerificationCallback(const Config& cfg, Comm& comm, bool leader);

  // Whether a verification is due after `step`.
  bool due(std::int64_t step, std::int64_t last_step) const;
  // Verifies every target (collective); the leader prints and records them in `metrics`.
  void run(std::int64_t step, Backbone& backbone, MetricsWriter* metrics);

 private:
  struct Target {
    std::shared_ptr<const VerificationBin> bin;
    double highest = 0;  // Accuracy-Highest of the run, earlier attempts included
  };

  // The highest accuracies metrics.h5 holds from before a resume.
  void recall_highest(const MetricsWriter& metrics);

  Comm& comm_;
  bool leader_;
  bool recalled_ = false;
  std::int64_t verbose_;
  std::optional<InjectedFault> fault_;  // PFC_FAULT's at:verification point
  std::vector<Target> targets_;
};

}  // namespace pfc
