#include "eval/ijb_embedding.h"

#include <algorithm>

#include "comm/agree_to_stop.h"
#include "core/error.h"
#include "eval/embedding_extractor.h"

namespace pfc {

std::vector<ImageRange> rank_batches(std::int64_t images, std::int64_t batch_size,
                                     const Comm& comm) {
  const std::vector<ImageRange> all = batch_ranges(images, batch_size);
  std::vector<ImageRange> mine;
  for (std::size_t b = 0; b < all.size(); ++b)
    if (static_cast<int>(b % static_cast<std::size_t>(comm.world_size())) == comm.rank())
      mine.push_back(all[b]);
  return mine;
}

void embed_ijb_images(Backbone& backbone, IjbImageSource& source, Comm& comm,
                      std::int64_t batch_size, const FeatureRows& rows,
                      const ImagesDone& progress) {
  Backend& backend = backbone.backend();
  const std::int64_t n = source.size();
  const std::int64_t emb = backbone.embedding_size();
  const std::int64_t world = comm.world_size();
  const std::vector<ImageRange> all = batch_ranges(n, batch_size);
  const auto batches = static_cast<std::int64_t>(all.size());
  const std::int64_t rounds = (batches + world - 1) / world;
  std::int64_t round = 0;
  // Every rank joins every round; one without a batch in it sends zeros.
  const auto finish_round = [&](const Tensor& mine) {
    const Tensor gathered = comm.all_gather_host(mine);
    if (comm.rank() == 0) {
      for (std::int64_t r = 0; r < world; ++r) {
        const std::int64_t b = round * world + r;
        if (b >= batches) break;
        const ImageRange& range = all[static_cast<std::size_t>(b)];
        rows(range.begin, gathered.rows(r * batch_size, r * batch_size + range.size()));
      }
    }
    ++round;
    if (progress) progress(std::min(n, round * world * batch_size));
    if (agree_to_stop(comm))
      throw Error("stopped by a signal during the embedding pass; nothing was written");
  };
  embed_images(backbone, source, rank_batches(n, batch_size, comm), true,
               [&](const ImageRange& r, const Tensor& embeddings, const Tensor& mirrored) {
                 const Tensor plain = backend.to_host(embeddings);
                 const Tensor flipped = backend.to_host(mirrored);
                 Tensor mine = Tensor::host({batch_size, emb}, DType::f32);
                 float* out = mine.data<float>();
                 std::fill(out, out + batch_size * emb, 0.0f);
                 const float* a = plain.data<float>();
                 const float* m = flipped.data<float>();
                 for (std::int64_t k = 0; k < r.size() * emb; ++k) out[k] = a[k] + m[k];
                 finish_round(mine);
               });
  Tensor none = Tensor::host({batch_size, emb}, DType::f32);
  std::fill(none.data<float>(), none.data<float>() + batch_size * emb, 0.0f);
  while (round < rounds) finish_round(none);
}

}  // namespace pfc
