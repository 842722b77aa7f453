// What a checkpoint holds, as host tensors. Written collectively by checkpoint_writer.h, read
// back on any number of ranks by checkpoint_reader.h; checkpoint_layout.h says where.
//
// On disk, output/<run>/ckpt/step_NNNNNNN/ (NNNNNNN: the step, 7 digits or more):
//   shard_RRRRR.h5  one per rank that wrote it: /weight and one dataset per optimiser moment
//                   (/momentum for SGD; /exp_avg and /exp_avg_sq for AdamW) [num_local, emb]
//                   in the type the run stored them in (f32, or f16 / bf16 under
//                   classifier_storage), attributes class_start, num_local, num_classes, rank,
//                   world_size
//   model.h5        /backbone/parameters/NAME, /backbone/MOMENT/NAME (one group per moment),
//                   /backbone/buffers/NAME: f32 in PyTorch layout, arcface_torch state_dict
//                   names; each group's attribute `names` lists them in order, one per line
//                   /state: attributes step, epoch, data_epoch, data_samples_in_epoch,
//                   loss_scale, loss_scale_clean_steps, lr_step, seed, world_size, method,
//                   sample_rate, num_classes, embedding_size, config (TOML), optimizer,
//                   backbone_updates, classifier_updates
//                   /pfc/weight, /pfc/MOMENT: virtual datasets [num_classes, emb] over the
//                   shard files, typed as the shards (relative names: the folder can move);
//                   /pfc attributes
//                   num_classes, embedding_size, class_start and num_local (one per shard),
//                   moments (the moment names, one per line)
//   latest (beside the step folders): the name of the newest complete checkpoint
// A checkpoint written before AdamW existed has no optimizer, updates or moments attributes: it
// reads as SGD with its one moment "momentum" and `step` updates of each part.
// Every dataset is chunked with HDF5's Fletcher32 checksum and the files use HDF5's
// checksummed metadata (object headers of format 1.8+), so damage is a read error naming what
// it hit; values are checked finite before writing and after reading (checkpoint_values.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/named_tensor.h"
#include "core/tensor.h"
#include "data/data_source.h"

namespace pfc {

struct TrainingState {
  std::int64_t step = 0;   // optimizer steps completed
  std::int64_t epoch = 0;
  DataPosition data;       // where the data stream continues
  double loss_scale = 1.0;
  std::int64_t loss_scale_clean_steps = 0;
  std::int64_t lr_step = 0;
  std::int64_t seed = 0;
  std::int64_t world_size = 0;  // of the run that saved it; set by the writer
  std::string method;
  double sample_rate = 1.0;
  std::int64_t num_classes = 0;
  std::int64_t embedding_size = 0;
  std::string config_toml;
  std::string optimizer = "sgd";       // "sgd" | "adamw": whose moments the checkpoint holds
  std::int64_t backbone_updates = 0;   // optimiser updates applied (AdamW's bias correction)
  std::int64_t classifier_updates = 0;
};

// One optimiser moment of every trained backbone parameter, under torch.optim's name of the
// moment ("momentum"; "exp_avg", "exp_avg_sq").
struct NamedMoment {
  std::string name;
  std::vector<NamedTensor> tensors;
};

// Rows [class_start, class_start + num_local) of the class centres and their optimiser
// moments. DP holds every row on every rank; it saves the rows of the MP layout of its rank.
struct ClassShard {
  std::int64_t class_start = 0;
  Tensor weight;                     // [num_local, embedding_size], host: f32, f16 or bf16
  std::vector<NamedTensor> moments;  // each shaped like weight (f32, f16 or bf16), in the order
                                     // of Checkpoint::moments
};

struct Checkpoint {
  std::vector<NamedTensor> parameters;  // the backbone (written from rank 0)
  std::vector<NamedMoment> moments;     // the optimiser's state of the trained parameters
  std::vector<NamedTensor> buffers;     // batch-norm running statistics
  ClassShard shard;                     // this rank's
  TrainingState state;
  // Whether its datasets carry HDF5's Fletcher32 checksum (set by the reader; checkpoints of
  // versions before checksums have none, and only their values' finiteness can reveal damage).
  bool has_checksums = true;
};

}  // namespace pfc
