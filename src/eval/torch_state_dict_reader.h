// Reads a backbone's state_dict as PyTorch's torch.save writes it (arcface_torch's model.pt):
// a zip archive holding <name>/data.pkl, a pickle of an OrderedDict from names to tensors, and
// one entry <name>/data/<key> per tensor storage. The pickle is read by pfc's own reader
// (eval/pickle_reader.h) with a vocabulary of exactly what such a file names:
// collections.OrderedDict, torch._utils._rebuild_tensor_v2 and torch's storage types, and the
// persistent ids ('storage', type, key, location, numel) that point into the archive. Nothing
// a file names is imported or run; anything else is refused by name.
//
// Such a file comes from strangers, so it is read in two steps, within limits the caller
// derives from the network (eval/model_file_limits.h): opening it parses the pickle alone
// (bounded in bytes and opcodes) into each tensor's name, element type and shape, and checks
// every view against its storage and every size the archive claims against the file; only
// then, once the caller has checked those names and shapes against its network, read() reads
// the storages of the tensors it names, each storage once and only the bytes its views reach.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/input_file.h"
#include "core/named_tensor.h"

namespace pfc {

class ZipArchive;

struct TorchStateDictLimits {
  InputFileLimit file;                        // the archive's size
  std::uint64_t storage_bytes = UINT64_MAX;   // one storage's
  std::uint64_t pickle_bytes = UINT64_MAX;    // data.pkl's
  std::size_t pickle_opcodes = SIZE_MAX;      // data.pkl's
  std::string bound;  // what the limits are derived from, for messages ("the network ...")
};

class TorchStateDict {
 public:
  // One tensor as the pickle describes it: a view (offset, size, stride) of a storage.
  struct Entry {
    std::string name;
    DType dtype = DType::f32;  // as read: float32 and float16 storages give f32, int64 i64
    Shape shape;
    std::string storage;       // the archive entry <name>/data/<key>
    std::int64_t offset = 0;
    std::vector<std::int64_t> stride;
  };

  // Opens the archive and reads its pickle; throws a UsageError naming the file (and the
  // tensor) for a file that is not such a zip archive (PyTorch's legacy format included), a
  // refused global or opcode, a pickle beyond its limits, another storage type, a storage
  // entry of the wrong size or beyond its limit, a view that runs past its storage, a
  // big-endian file or a repeated name.
  TorchStateDict(const std::filesystem::path& file, const TorchStateDictLimits& limits);
  ~TorchStateDict();
  TorchStateDict(const TorchStateDict&) = delete;
  TorchStateDict& operator=(const TorchStateDict&) = delete;

  // Every tensor of the state_dict, in its order.
  const std::vector<Entry>& entries() const { return entries_; }

  // The tensors named in `names`, in the state_dict's order, contiguous on the host: float32
  // storages as f32, float16 ones widened to f32 (exactly), int64 ones (batch-norm counters)
  // as i64; a view with strides and an offset is read as PyTorch reads it.
  std::vector<NamedTensor> read(const std::set<std::string>& names) const;

  // One storage as the pickle names it, checked against its archive entry.
  struct Storage {
    std::size_t element_size = 0;
    DType stored = DType::f32;  // f16 is widened to f32 as it is read
    std::int64_t numel = 0;
  };

 private:
  std::filesystem::path file_;
  std::unique_ptr<ZipArchive> archive_;
  std::vector<Entry> entries_;
  std::map<std::string, Storage> storages_;  // by archive entry
};

// Every tensor of the file (read() of them all), for files whose size is not bounded by a
// network.
std::vector<NamedTensor> read_torch_state_dict(const std::filesystem::path& file,
                                               const TorchStateDictLimits& limits = {});

}  // namespace pfc
