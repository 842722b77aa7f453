#include "eval/verify_on_ranks.h"

#include <algorithm>

#include "eval/embedding_extractor.h"

namespace pfc {

VerificationResult verify_on_ranks(Backbone& backbone,
                                   const std::shared_ptr<const VerificationBin>& bin, Comm& comm,
                                   std::int64_t batch_size,
                                   const VerificationProgress& progress) {
  Backend& backend = backbone.backend();
  const std::int64_t n = bin->images();
  std::vector<ImageRange> mine;
  const std::vector<ImageRange> all = batch_ranges(n, batch_size);
  for (std::size_t b = 0; b < all.size(); ++b)
    if (static_cast<int>(b % static_cast<std::size_t>(comm.world_size())) == comm.rank())
      mine.push_back(all[b]);

  // Rows [0, n) the images' embeddings, [n, 2n) their mirror images'. Each row is written by
  // one rank and zero on the others, so the sum over ranks gathers them exactly.
  Tensor gathered =
      backend.zeros({2 * n, backbone.embedding_size()}, DType::f32, MemoryPurpose::workspace);
  BinImageSource source(bin, backbone.image_size());
  std::int64_t done = 0;
  embed_images(backbone, source, mine, true,
               [&](const ImageRange& r, const Tensor& embeddings, const Tensor& mirrored) {
                 Tensor plain_rows = gathered.rows(r.begin, r.end);
                 Tensor mirrored_rows = gathered.rows(n + r.begin, n + r.end);
                 backend.copy(embeddings, plain_rows);
                 backend.copy(mirrored, mirrored_rows);
                 done += r.size();
                 if (progress) progress(std::min(n, done * comm.world_size()));
               });
  comm.all_reduce(gathered, ReduceOp::sum);
  const Tensor host = backend.to_host(gathered);
  return evaluate_verification(host.rows(0, n), host.rows(n, 2 * n), bin->issame());
}

}  // namespace pfc
