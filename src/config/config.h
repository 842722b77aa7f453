// Everything a run is told, with arcface_torch's key names where it has one. Read from TOML,
// then `--set key=value` overrides, then validated as a whole (config/validate_config.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace pfc {

// `resume`: false (start a new run, or from resume_from), true (continue from the latest
// checkpoint in `output`; there must be one), or "auto" (continue when there is one, else
// start: the setting for jobs that may be requeued).
enum class ResumeMode { off, on, automatic };

struct Config {
  // ---- arcface_torch's keys -------------------------------------------------------------
  std::string network = "r50";        // r18 ... r200, "custom" (layers/widths), mbf, mbf_large,
                                      // vit_t ... vit_h, "vit" (embed_dim ... using_checkpoint)
  std::int64_t embedding_size = 512;
  double sample_rate = 1.0;           // fraction of each shard's class centres per step; 0: positives
  bool fp16 = true;
  std::int64_t batch_size = 128;      // per rank
  double lr = 0.1;                    // as applied, or for a global batch of 512 (lr_scaling)
  std::string optimizer = "sgd";      // "sgd" | "adamw"
  double momentum = 0.9;              // sgd
  double weight_decay = 5e-4;
  std::int64_t gradient_acc = 1;      // micro-batches whose gradients one optimiser step sums
  double interclass_filtering_threshold = 0.0;  // negatives above this cosine become 0; 0: off
  std::array<double, 3> margin_list{1.0, 0.5, 0.0};
  std::int64_t num_classes = 1000000;
  std::int64_t num_image = 1000000;
  std::int64_t num_epoch = 30;
  double warmup_epoch = 0.0;
  std::string rec = "synthetic";      // "synthetic" or a folder with train.rec / train.idx
  std::string output = "output/run";
  std::int64_t seed = 2048;
  std::int64_t frequent = 10;         // log every this many steps
  std::vector<std::string> val_targets;  // verification sets <rec>/<name>.bin
  std::int64_t verbose = 2000;        // verify every this many steps (and at the end)

  // ---- ours ------------------------------------------------------------------------------
  std::string method = "pfc";         // "dp" | "mp" | "pfc"
  // Which arcface_torch the classifier follows (README, "The two arcface_torch versions"): the
  // seed's by default (sampled, exact); an imported .py config takes today's.
  std::string classifier_update = "sampled";  // "sampled" | "dense"
  std::string margin_gradient = "exact";      // "exact" | "straight_through"
  std::string classifier_precision = "fp16";  // "fp16" (f16 GEMMs with fp16 on) | "fp32"
  std::string device = "cpu";         // "cpu" | "cuda" | "meta" (pfc plan)
  std::string plan_for = "cuda";      // device = "meta": the backend a plan is of
  bool memory_check = true;           // pfc train refuses a run its plan says does not fit
  // The class centres and their optimiser moments in f32, or stored in 16 bits and rounded
  // stochastically by each update (README, "Class centres in 16 bits").
  std::string classifier_storage = "f32";  // "f32" | "f16" | "bf16"
  std::vector<std::int64_t> layers;   // custom depth per stage (network = "custom")
  std::vector<std::int64_t> widths{64, 128, 256, 512};
  std::int64_t image_size = 112;
  // The Vision Transformer of network = "vit" (the vit_* names take arcface_torch's own).
  std::int64_t embed_dim = 256;
  std::int64_t depth = 12;
  std::int64_t num_heads = 8;
  double mask_ratio = 0.1;
  double drop_path_rate = 0.1;
  bool using_checkpoint = false;
  double scale_s = 64.0;
  // "step" (the seed's train.py) | "polynomial" (arcface_torch's older PolyScheduler) |
  // "polynomial_warmup" (today's train_v2.py: lr_scheduler.py's PolynomialLRWarmup)
  std::string lr_schedule = "step";
  double lr_power = 0.0;              // the polynomial decay's power; 0: the schedule's own
  std::string lr_scaling = "batch/512";  // "batch/512": lr x global batch / 512; "none": lr
  std::vector<double> decay_epoch{10, 16, 22};
  double clip_grad_norm = 5.0;
  std::int64_t steps = 0;             // stop after this many steps (0: run all epochs)
  std::string synthetic_labels = "constant";  // "constant" (label 1) | "uniform"
  std::int64_t checkpoint_every = 0;  // 0: only at the end; -1: never
  std::int64_t keep_checkpoints = 2;
  ResumeMode resume = ResumeMode::off;
  std::string resume_from;  // a checkpoint folder (or a run's output folder) to start from
  std::string pretrained;   // a new run's backbone: a pfc run, a model.pt or an ONNX model
  std::int64_t data_workers = 4;
  std::int64_t divergence_steps = 3;  // stop as diverged after this many non-finite losses
  double collective_timeout_s = 1800.0;  // a collective waiting longer ends the run; 0: never
  std::int64_t emulate_world_size = 0;  // > 0: play one rank of a world this size
  std::int64_t emulate_rank = 0;
  double emulate_bandwidth_gbps = 150.0;  // per-GPU bus bandwidth of the modelled network
  double emulate_latency_us = 10.0;

  // The text it was read from, with overrides, as written to metrics.h5 (for an arcface_torch
  // .py config, the TOML it was read as).
  std::string source_text;
  // What reading it decided that the user should hear (keys ignored or translated), logged
  // once by the command that reads it.
  std::vector<std::string> notes;
};

}  // namespace pfc
