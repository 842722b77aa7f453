#include "eval/embed_on_ranks.h"

#include <algorithm>
#include <cstring>

namespace pfc {

namespace {

// One rank's share of a round: [batch_size, copies * emb] f32 rows (each image's embedding,
// then its mirror image's when asked) and [batch_size] i64 tags; rows past its batch are
// padding, and a rank without a batch in the round sends padding only.
struct RoundBlock {
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
  std::vector<ImageRange> mine;
  for (std::size_t b = static_cast<std::size_t>(comm.rank()); b < all.size();
       b += static_cast<std::size_t>(world))
    mine.push_back(all[b]);

  RoundBlock block{Tensor::host({batch_size, copies * emb}, DType::f32),
                   Tensor::host({batch_size}, DType::i64)};
  std::int64_t round = 0;
  // Every rank takes part in every round, with or without a batch of its own.
  auto finish_round = [&] {
    const Tensor rows = comm.all_gather_host(block.rows);
    const Tensor tags = comm.all_gather_host(block.tags);
    if (comm.rank() == 0) {
      for (int r = 0; r < world; ++r) {
        const std::size_t b = static_cast<std::size_t>(round * world + r);
        if (b >= all.size()) break;
        const ImageRange& range = all[b];
        const std::int64_t n = range.size();
        // Rank r's rows, split back into the embeddings and the mirror images'.
        EmbeddedBatch batch;
        batch.range = range;
        batch.embeddings = Tensor::host({n, emb}, DType::f32);
        if (with_mirrored) batch.mirrored = Tensor::host({n, emb}, DType::f32);
        const float* src = rows.data<float>() + r * batch_size * copies * emb;
        for (std::int64_t i = 0; i < n; ++i) {
          std::memcpy(batch.embeddings.data<float>() + i * emb, src + i * copies * emb,
                      static_cast<std::size_t>(emb) * sizeof(float));
          if (with_mirrored)
            std::memcpy(batch.mirrored.data<float>() + i * emb, src + (i * copies + 1) * emb,
                        static_cast<std::size_t>(emb) * sizeof(float));
        }
        batch.tags = tags.data<std::int64_t>() + r * batch_size;
        on_rank0(batch);
      }
    }
    ++round;
  };

  embed_images(backbone, source, mine, with_mirrored,
               [&](const ImageRange& r, const Tensor& embeddings, const Tensor& mirrored) {
                 const Tensor plain = backend.to_host(embeddings);
                 const Tensor flipped = with_mirrored ? backend.to_host(mirrored) : Tensor();
                 float* rows = block.rows.data<float>();
                 std::int64_t* tags = block.tags.data<std::int64_t>();
                 for (std::int64_t i = 0; i < r.size(); ++i) {
                   std::memcpy(rows + i * copies * emb, plain.data<float>() + i * emb,
                               static_cast<std::size_t>(emb) * sizeof(float));
                   if (with_mirrored)
                     std::memcpy(rows + (i * copies + 1) * emb, flipped.data<float>() + i * emb,
                                 static_cast<std::size_t>(emb) * sizeof(float));
                   tags[i] = tag ? tag(r.begin + i) : 0;
                 }
                 finish_round();
               });
  while (round < rounds) finish_round();
}

}  // namespace pfc
