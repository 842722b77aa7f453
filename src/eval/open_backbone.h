// Opens a trained network for inference: a run's output folder (the checkpoint its `latest`
// names, else its newest complete one, with a warning) or a checkpoint's step folder becomes
// a Backbone on a backend, built from the config the run recorded in the checkpoint and loaded
// with its parameters and batch-norm statistics, ready for forward(images,
// ForwardMode::inference). `pfc verify`, `pfc embed` and `pfc export`
// open their networks here.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "backend/backend.h"
#include "config/config.h"
#include "io/checkpoint_layout.h"
#include "model/backbone.h"

namespace pfc {

struct OpenedBackbone {
  std::unique_ptr<Backbone> backbone;
  Config config;              // the run's, as the checkpoint recorded it
  CheckpointInfo checkpoint;  // the step folder read, and its step
};

struct OpenBackboneOptions {
  // f32; f16 for an fp16 inference on cuda; f64 on the CPU for a reference.
  DType activations = DType::f32;
  // When given, the checkpoint must hold this config's network: otherwise a UsageError
  // names both networks.
  std::optional<Config> expected;
};

// Throws a UsageError (exit 2) naming the path when it is neither a run folder with a
// checkpoint nor a checkpoint, or when the checkpoint's tensors are not its config's network;
// a pfc::Error when a file of the checkpoint cannot be read.
OpenedBackbone open_backbone(const std::filesystem::path& run_or_checkpoint, Backend& backend,
                             const OpenBackboneOptions& options = {});

}  // namespace pfc
