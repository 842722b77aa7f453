#include "eval/embed_on_ranks.h"

#include <algorithm>
#include <cstring>

namespace pfc {

namespace {

// The images a rank gathers at once, at least: at small batches the ranks gather a group of
// rounds together, so that they wait for each other once per group rather than once per batch
// (at batch 1 on 2 ranks that cost a tenth of a ViT's embedding time).
constexpr std::int64_t kImagesPerGather = 64;

// One rank's share of a group of rounds: [group * batch_size, copies * emb] f32 rows (each
// image's embedding, then its mirror image's when asked) and [group * batch_size] i64 tags,
// one batch_size slot per round; rows past a batch are padding, and a rank without a batch in
// a round sends padding only.
struct GroupBlock {
  Tensor rows, tags;
};

}  // namespace

void embed_on_ranks(Backbone& backbone, ImageSource& source, std::int64_t batch_size,
                    bool with_mirrored, Comm& comm, const ImageTag& tag,
                    const EmbeddedBatchSink& on_rank0) {
  Backend& backend = backbone.backend();
  const int world = comm.world_size();
  const std::int64_t emb = backbone.embedding_size(), copies = with_mirrored ? 2 : 1;
  const std::vector<ImageRange> all = batch_ranges(source.size(), batch_size);
  const std::int64_t rounds = (static_cast<std::int64_t>(all.size()) + world - 1) / world;
  const std::int64_t group = std::max<std::int64_t>(
      1, std::min(rounds, (kImagesPerGather + batch_size - 1) / batch_size));
  const std::int64_t groups = (rounds + group - 1) / group;
  std::vector<ImageRange> mine;
  for (std::size_t b = static_cast<std::size_t>(comm.rank()); b < all.size();
       b += static_cast<std::size_t>(world))
    mine.push_back(all[b]);

  GroupBlock block{Tensor::host({group * batch_size, copies * emb}, DType::f32),
                   Tensor::host({group * batch_size}, DType::i64)};
  std::int64_t gathered = 0, filled = 0;  // groups gathered; rounds of this group filled
  // Every rank takes part in every group, with or without batches of its own.
  auto finish_group = [&] {
    const Tensor rows = comm.all_gather_host(block.rows);
    const Tensor tags = comm.all_gather_host(block.tags);
    if (comm.rank() == 0) {
      // In input order: round by round, and within a round rank by rank.
      for (std::int64_t g = 0; g < group; ++g)
        for (int r = 0; r < world; ++r) {
          const auto b = static_cast<std::size_t>((gathered * group + g) * world + r);
          if (b >= all.size()) break;
          const ImageRange& range = all[b];
          const std::int64_t n = range.size();
          const std::int64_t slot = r * group * batch_size + g * batch_size;
          // Rank r's rows, split back into the embeddings and the mirror images'.
          EmbeddedBatch batch;
          batch.range = range;
          batch.embeddings = Tensor::host({n, emb}, DType::f32);
          if (with_mirrored) batch.mirrored = Tensor::host({n, emb}, DType::f32);
          const float* src = rows.data<float>() + slot * copies * emb;
          for (std::int64_t i = 0; i < n; ++i) {
            std::memcpy(batch.embeddings.data<float>() + i * emb, src + i * copies * emb,
                        static_cast<std::size_t>(emb) * sizeof(float));
            if (with_mirrored)
              std::memcpy(batch.mirrored.data<float>() + i * emb, src + (i * copies + 1) * emb,
                          static_cast<std::size_t>(emb) * sizeof(float));
          }
          batch.tags = tags.data<std::int64_t>() + slot;
          on_rank0(batch);
        }
    }
    ++gathered;
    filled = 0;
  };

  embed_images(backbone, source, mine, with_mirrored,
               [&](const ImageRange& r, const Tensor& embeddings, const Tensor& mirrored) {
                 const Tensor plain = backend.to_host(embeddings);
                 const Tensor flipped = with_mirrored ? backend.to_host(mirrored) : Tensor();
                 float* rows = block.rows.data<float>() + filled * batch_size * copies * emb;
                 std::int64_t* tags = block.tags.data<std::int64_t>() + filled * batch_size;
                 for (std::int64_t i = 0; i < r.size(); ++i) {
                   std::memcpy(rows + i * copies * emb, plain.data<float>() + i * emb,
                               static_cast<std::size_t>(emb) * sizeof(float));
                   if (with_mirrored)
                     std::memcpy(rows + (i * copies + 1) * emb, flipped.data<float>() + i * emb,
                                 static_cast<std::size_t>(emb) * sizeof(float));
                   tags[i] = tag ? tag(r.begin + i) : 0;
                 }
                 if (++filled == group) finish_group();
               });
  while (gathered < groups) finish_group();
}

}  // namespace pfc
