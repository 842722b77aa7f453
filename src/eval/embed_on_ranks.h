// The embeddings of every image of a source, computed on the ranks of a run and handed to rank
// 0 in input order (`pfc embed` under mpiexec/srun). Batch b goes to rank b % world, round
// b / world; after each group of rounds (one round at 64 images per batch or more, enough
// rounds for 64 images per rank below) the ranks gather the group's embeddings (with a
// per-image tag, such as a record's label, that only the rank which read the image knows) and
// rank 0 receives them, batch by batch. Each rank holds two batches of images and one group of
// embeddings, so the memory stays the same whatever the number of images. Collective over
// comm.
#pragma once

#include <cstdint>
#include <functional>

#include "comm/comm.h"
#include "eval/embedding_extractor.h"

namespace pfc {

// One batch as rank 0 receives it: host tensors [range.size(), emb] f32 (mirrored undefined
// unless asked for) and the images' tags.
struct EmbeddedBatch {
  ImageRange range;
  Tensor embeddings, mirrored;
  const std::int64_t* tags = nullptr;
};

// tag(i): read on the rank that decoded image i, after decoding it (0 when not given).
using ImageTag = std::function<std::int64_t(std::int64_t image)>;
using EmbeddedBatchSink = std::function<void(const EmbeddedBatch& batch)>;

void embed_on_ranks(Backbone& backbone, ImageSource& source, std::int64_t batch_size,
                    bool with_mirrored, Comm& comm, const ImageTag& tag,
                    const EmbeddedBatchSink& on_rank0);

}  // namespace pfc
