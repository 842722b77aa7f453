// Files as PyTorch's torch.save writes a state_dict (a zip archive of <name>/data.pkl and
// <name>/data/<key> storages), made without PyTorch for the reader's unit tests: the pickle
// is written opcode by opcode as torch's protocol-2 pickler writes it, so that single parts can
// be changed (a foreign global, a view past its storage, a short storage).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "support/verification_bins.h"

namespace pfc::test {

// One tensor of a state_dict: a view (offset, size, stride) of a storage.
struct TorchTensorRecord {
  std::string name;
  std::string storage_type = "FloatStorage";  // torch.<storage_type>
  std::string key;                            // its storage: <name>/data/<key>
  std::int64_t storage_numel = 0;
  std::int64_t offset = 0;
  Shape size, stride;
};

// data.pkl of an OrderedDict of these tensors, as torch.save pickles it (protocol 2).
// `rebuild` is the GLOBAL that rebuilds each tensor ("module\nname\n").
Bytes torch_state_dict_pickle(const std::vector<TorchTensorRecord>& tensors,
                              const std::string& rebuild = "torch._utils\n_rebuild_tensor_v2\n");

// A zip archive of these entries, stored uncompressed as torch.save stores them.
void write_zip(const std::string& path, const std::vector<std::pair<std::string, Bytes>>& entries);

// The bytes of float32 values, little-endian.
Bytes float_bytes(const std::vector<float>& values);

}  // namespace pfc::test
