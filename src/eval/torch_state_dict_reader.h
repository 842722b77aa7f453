// Reads a backbone's state_dict as PyTorch's torch.save writes it (arcface_torch's model.pt):
// a zip archive holding <name>/data.pkl, a pickle of an OrderedDict from names to tensors, and
// one entry <name>/data/<key> per tensor storage. The pickle is read by pfc's own reader
// (eval/pickle_reader.h) with a vocabulary of exactly what such a file names:
// collections.OrderedDict, torch._utils._rebuild_tensor_v2 and torch's storage types, and the
// persistent ids ('storage', type, key, location, numel) that point into the archive. Nothing
// a file names is imported or run; anything else is refused by name.
#pragma once

#include <filesystem>
#include <vector>

#include "core/named_tensor.h"

namespace pfc {

// Every tensor of the state_dict, in its order, contiguous on the host: float32 storages as
// f32, float16 ones widened to f32 (exactly), int64 ones (batch-norm counters) as i64. A view
// with strides and an offset is read as PyTorch reads it. Throws a UsageError naming the file
// (and the tensor) for a file that is not such a zip archive (PyTorch's legacy format
// included), a refused global or opcode, another storage type, a storage entry of the wrong
// size, a view that runs past its storage, a big-endian file or a repeated name.
std::vector<NamedTensor> read_torch_state_dict(const std::filesystem::path& file);

}  // namespace pfc
