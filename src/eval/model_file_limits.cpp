#include "eval/model_file_limits.h"

#include <fmt/format.h>

namespace pfc {

ModelFileLimits model_file_limits(const Backbone& network) {
  ModelFileLimits limits;
  std::size_t tensors = 0;
  for (const Parameter* p : network.parameters()) {
    limits.network_bytes += 4 * static_cast<std::uint64_t>(p->value.numel());
    ++tensors;
  }
  for (const Buffer* b : network.buffers()) {
    limits.network_bytes += 4 * static_cast<std::uint64_t>(b->value.numel());
    ++tensors;
  }
  const std::uint64_t file_bytes = 2 * limits.network_bytes + (std::uint64_t{16} << 20);
  limits.file = {file_bytes,
                 fmt::format("the {} a model file of the network {} may hold (twice its {} of "
                             "float32 weights, plus 16 MiB)",
                             byte_count_text(file_bytes), network.describe(),
                             byte_count_text(limits.network_bytes))};
  limits.storage_bytes = limits.network_bytes;
  limits.pickle_bytes = (std::uint64_t{64} << 10) + (std::uint64_t{4} << 10) * tensors;
  limits.pickle_opcodes = 4096 + 256 * tensors;
  return limits;
}

}  // namespace pfc
