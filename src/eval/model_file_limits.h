// How much a model file for a given network may make pfc read and hold. A model file comes
// from elsewhere (a model zoo, a download), and nothing in it may cost more than the network
// it must fill: these bounds, derived from the network's own size, are checked before the
// bytes are read, each refusal naming the bound.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/input_file.h"
#include "model/backbone.h"

namespace pfc {

struct ModelFileLimits {
  std::uint64_t network_bytes = 0;  // every parameter and buffer as float32
  // The whole file: twice the network's float32 bytes (room for an f32 copy and more), plus
  // 16 MiB for a graph or a pickle.
  InputFileLimit file;
  // One storage of a torch.save archive: no larger than the whole network.
  std::uint64_t storage_bytes = 0;
  // A state_dict's pickle (data.pkl): its bytes and opcodes, at most 4 KiB and 256 opcodes a
  // tensor (torch writes about 200 bytes and 40 opcodes), plus 64 KiB and 4096.
  std::uint64_t pickle_bytes = 0;
  std::size_t pickle_opcodes = 0;
};

ModelFileLimits model_file_limits(const Backbone& network);

}  // namespace pfc
