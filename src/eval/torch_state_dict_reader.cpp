#include "eval/torch_state_dict_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/half.h"
#include "eval/pickle_reader.h"
#include "io/zip_archive.h"

namespace pfc {

namespace {

using Kind = PickleObject::Kind;

constexpr const char* kOrderedDict = "collections.OrderedDict";
constexpr const char* kRebuildTensor = "torch._utils._rebuild_tensor_v2";

// The storage types a state_dict may name, and the element type of those pfc reads.
struct StorageType {
  const char* name;
  std::size_t element_size;
  std::optional<DType> stored;  // f16 is widened to f32 as it is read
};
constexpr StorageType kStorageTypes[] = {
    {"torch.FloatStorage", 4, DType::f32},      {"torch.HalfStorage", 2, DType::f16},
    {"torch.LongStorage", 8, DType::i64},       {"torch.DoubleStorage", 8, std::nullopt},
    {"torch.BFloat16Storage", 2, std::nullopt}, {"torch.IntStorage", 4, std::nullopt},
    {"torch.ShortStorage", 2, std::nullopt},    {"torch.CharStorage", 1, std::nullopt},
    {"torch.ByteStorage", 1, std::nullopt},     {"torch.BoolStorage", 1, std::nullopt},
};

const StorageType* find_storage_type(const std::string& name) {
  for (const StorageType& t : kStorageTypes)
    if (name == t.name) return &t;
  return nullptr;
}

PickleVocabulary state_dict_vocabulary(const TorchStateDictLimits& limits) {
  PickleVocabulary v;
  v.file_kind = "a PyTorch state_dict (data.pkl)";
  v.contents = "an OrderedDict of tensors: names, integers, tuples, dicts, the calls of "
               "collections.OrderedDict and torch._utils._rebuild_tensor_v2, and storage ids";
  v.objects = true;
  v.persistent_ids = true;
  v.globals = {kOrderedDict, kRebuildTensor};
  for (const StorageType& t : kStorageTypes) v.globals.emplace_back(t.name);
  v.max_opcodes = limits.pickle_opcodes;
  v.opcode_bound = fmt::format("more than a state_dict of {} holds", limits.bound);
  return v;
}

using Entry = TorchStateDict::Entry;
using Storage = TorchStateDict::Storage;

// The pickle's tensors and storages, checked against the archive's directory; no storage is
// read.
class PickleIndex {
 public:
  PickleIndex(const std::filesystem::path& file, const ZipArchive& archive,
              const TorchStateDictLimits& limits)
      : file_(file), archive_(archive), limits_(limits) {
    prefix_ = find_prefix();
    check_byte_order();
    const std::string pickle_entry = prefix_ + "data.pkl";
    const std::uint64_t pickle_size = archive_.size(pickle_entry);
    if (pickle_size > limits.pickle_bytes)
      fail(fmt::format("its {} holds {} bytes, more than the {} a state_dict of {} needs",
                       pickle_entry, pickle_size, byte_count_text(limits.pickle_bytes),
                       limits.bound));
    pickle_ = archive_.read(pickle_entry);
  }

  void index(std::vector<Entry>& entries, std::map<std::string, Storage>& storages) {
    try {
      doc_ = parse_pickle(pickle_, state_dict_vocabulary(limits_));
    } catch (const UsageError& e) {
      fail(fmt::format("{}data.pkl: {}", prefix_, e.what()));
    }
    const PickleObject& root = doc_.at(doc_.root);
    if (!is_call_of(root, kOrderedDict) && root.kind != Kind::dict)
      fail(fmt::format("its pickle holds {}, not a state_dict (an OrderedDict of tensors)",
                       describe(root)));
    if (root.kind == Kind::call && !doc_.at(root.items[1]).items.empty())
      fail("its OrderedDict is made with arguments; a state_dict's has none");
    std::set<std::string> names;
    for (const auto& [key, value] : root.entries) {
      const PickleObject& name = doc_.at(key);
      if (name.kind != Kind::text)
        fail(fmt::format("a state_dict key is {}, not a name", describe(name)));
      if (!names.insert(name.text).second)
        fail(fmt::format("tensor '{}' appears twice", name.text));
      entries.push_back(tensor(name.text, doc_.at(value), storages));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError(fmt::format("'{}' (a PyTorch state_dict): {}", file_.string(), why));
  }
  [[noreturn]] void fail(const std::string& tensor, const std::string& why) const {
    fail(fmt::format("tensor '{}': {}", tensor, why));
  }

  std::string describe(const PickleObject& o) const {
    if (o.kind == Kind::call)
      return fmt::format("a call of {}", doc_.at(o.items[0]).text);
    return describe_pickle_object(o);
  }

  bool is_call_of(const PickleObject& o, const char* callable) const {
    return o.kind == Kind::call && doc_.at(o.items[0]).text == callable;
  }

  // torch.save names every entry "<archive name>/...": the one folder holding data.pkl.
  std::string find_prefix() const {
    std::string prefix;
    for (const std::string& name : archive_.names()) {
      const std::size_t slash = name.find('/');
      if (slash == std::string::npos || name.substr(slash + 1) != "data.pkl") continue;
      if (!prefix.empty())
        fail(fmt::format("it holds two pickles, {}data.pkl and {}", prefix, name));
      prefix = name.substr(0, slash + 1);
    }
    if (prefix.empty())
      fail("it is a zip archive without <name>/data.pkl, so not one torch.save wrote");
    return prefix;
  }

  // Archives of PyTorch 1.6 to 1.9 have no `byteorder` entry and are little-endian.
  void check_byte_order() const {
    const std::string entry = prefix_ + "byteorder";
    if (!archive_.contains(entry)) return;
    if (archive_.size(entry) > 16)
      fail(fmt::format("its byteorder entry holds {} bytes; pfc reads 'little'",
                       archive_.size(entry)));
    const std::vector<std::uint8_t> bytes = archive_.read(entry);
    const std::string order(bytes.begin(), bytes.end());
    if (order != "little")
      fail(fmt::format("its byteorder is '{}'; pfc reads little-endian storages", order));
  }

  std::int64_t integer(const std::string& tensor, const PickleObject& o,
                       const char* what) const {
    if (o.kind != Kind::integer)
      fail(tensor, fmt::format("its {} is {}, not an integer", what, describe(o)));
    if (o.integer < 0) fail(tensor, fmt::format("its {} is negative ({})", what, o.integer));
    return o.integer;
  }

  std::vector<std::int64_t> integers(const std::string& tensor, const PickleObject& o,
                                     const char* what) const {
    if (o.kind != Kind::tuple)
      fail(tensor, fmt::format("its {} is {}, not a tuple", what, describe(o)));
    std::vector<std::int64_t> values;
    for (const std::size_t item : o.items) values.push_back(integer(tensor, doc_.at(item), what));
    return values;
  }

  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks).
  Entry tensor(const std::string& name, const PickleObject& value,
               std::map<std::string, Storage>& storages) const {
    if (!is_call_of(value, kRebuildTensor))
      fail(name, fmt::format("it is {}, not a tensor ({})", describe(value), kRebuildTensor));
    const PickleObject& args = doc_.at(value.items[1]);
    if (args.items.size() != 6)
      fail(name, fmt::format("{} has {} arguments; a plain tensor has 6 (a tensor with Python "
                             "attributes or of a subclass is not read)",
                             kRebuildTensor, args.items.size()));
    const PickleObject& hooks = doc_.at(args.items[5]);
    if (!is_call_of(hooks, kOrderedDict) || !hooks.entries.empty())
      fail(name, "it carries backward hooks; a state_dict's tensors have none");
    Entry entry;
    entry.name = name;
    const auto [key, storage] = storage_of(name, doc_.at(args.items[0]), storages);
    entry.storage = key;
    entry.dtype = storage.stored == DType::i64 ? DType::i64 : DType::f32;
    entry.offset = integer(name, doc_.at(args.items[1]), "storage offset");
    entry.shape = integers(name, doc_.at(args.items[2]), "size");
    entry.stride = integers(name, doc_.at(args.items[3]), "stride");
    if (entry.stride.size() != entry.shape.size())
      fail(name, fmt::format("its size {} and stride ({} values) disagree",
                             shape_string(entry.shape), entry.stride.size()));
    check_view(entry, storage);
    return entry;
  }

  // ('storage', torch.XStorage, key, location, numel): the archive entry data/<key>, checked
  // against its size in the archive and the limit before anything is read.
  std::pair<std::string, Storage> storage_of(const std::string& name, const PickleObject& id,
                                             std::map<std::string, Storage>& storages) const {
    if (id.kind != Kind::persistent_id)
      fail(name, fmt::format("its storage is {}, not a storage id", describe(id)));
    const PickleObject& record = doc_.at(id.items[0]);
    if (record.kind != Kind::tuple || record.items.size() != 5 ||
        doc_.at(record.items[0]).kind != Kind::text ||
        doc_.at(record.items[0]).text != "storage")
      fail(name, fmt::format("its storage id is {}, not ('storage', type, key, location, "
                             "numel)",
                             describe(record)));
    const PickleObject& type_name = doc_.at(record.items[1]);
    const PickleObject& key = doc_.at(record.items[2]);
    if (type_name.kind != Kind::global || key.kind != Kind::text)
      fail(name, "its storage id does not name a storage type and a key");
    const StorageType* type = find_storage_type(type_name.text);
    if (type == nullptr || !type->stored)
      fail(name, fmt::format("it is stored as {}; pfc reads torch.FloatStorage (float32), "
                             "torch.HalfStorage (float16) and torch.LongStorage (int64)",
                             type_name.text));
    const std::int64_t numel = integer(name, doc_.at(record.items[4]), "storage's numel");
    const std::string entry = prefix_ + "data/" + key.text;
    const auto found = storages.find(entry);
    if (found != storages.end()) {
      if (found->second.stored != *type->stored || found->second.numel != numel)
        fail(name, fmt::format("storage '{}' is named again as another type or size",
                               key.text));
      return *found;
    }
    if (!archive_.contains(entry))
      fail(name, fmt::format("its storage {} is not in the archive", entry));
    // Checked before reading: an absurd numel must not become an allocation.
    const std::uint64_t bytes = archive_.size(entry);
    if (static_cast<std::uint64_t>(numel) > bytes / type->element_size ||
        bytes != static_cast<std::uint64_t>(numel) * type->element_size)
      fail(name, fmt::format("its storage {} holds {} bytes, {} {}-byte values need {}: the "
                             "file is truncated or damaged",
                             entry, bytes, numel, type->element_size,
                             static_cast<double>(numel) * static_cast<double>(type->element_size)));
    if (bytes > limits_.storage_bytes)
      fail(name, fmt::format("its storage {} holds {} bytes, more than the {} of {}: no tensor "
                             "of it needs so much",
                             entry, bytes, byte_count_text(limits_.storage_bytes),
                             limits_.bound));
    Storage storage;
    storage.element_size = type->element_size;
    storage.stored = *type->stored;
    storage.numel = numel;
    return *storages.emplace(entry, storage).first;
  }

  // Every element of the view must lie inside the storage.
  void check_view(const Entry& entry, const Storage& storage) const {
    const Shape& shape = entry.shape;
    std::int64_t count = 1;
    for (const std::int64_t size : shape) {
      if (size == 0) count = 0;
      // Checked before multiplying: a view has no more elements than its storage (a
      // broadcast with stride 0, which no state_dict holds, could claim any number).
      if (count != 0 && size > storage.numel / count)
        fail(entry.name, fmt::format("its size {} has more elements than its storage's {}",
                                     shape_string(shape), storage.numel));
      count *= size;
    }
    if (count == 0) return;
    // Where its last element lies: each step (size - 1) x stride is checked to stay inside
    // the storage before it is added, so nothing overflows.
    std::int64_t last = entry.offset;
    for (std::size_t d = 0; d <= shape.size(); ++d) {
      const bool inside = last < storage.numel &&
                          (d == shape.size() || shape[d] == 1 ||
                           entry.stride[d] <= (storage.numel - 1 - last) / (shape[d] - 1));
      if (!inside)
        fail(entry.name, fmt::format("the view of size {}, stride ({}) at offset {} runs past "
                                     "its storage of {} values",
                                     shape_string(shape), fmt::join(entry.stride, ", "),
                                     entry.offset, storage.numel));
      if (d < shape.size()) last += (shape[d] - 1) * entry.stride[d];
    }
  }

  std::filesystem::path file_;
  const ZipArchive& archive_;
  const TorchStateDictLimits& limits_;
  std::string prefix_;  // "<archive name>/"
  std::vector<std::uint8_t> pickle_;
  PickleDocument doc_;
};

// [first, last + 1): the elements of the storage a view reaches (checked inside it).
std::pair<std::int64_t, std::int64_t> view_span(const Entry& entry) {
  std::int64_t last = entry.offset;
  for (std::size_t d = 0; d < entry.shape.size(); ++d) {
    if (entry.shape[d] == 0) return {entry.offset, entry.offset};
    last += (entry.shape[d] - 1) * entry.stride[d];
  }
  return {entry.offset, last + 1};
}

// Storages are little-endian (checked), as the hosts pfc runs on.
void copy_element(const std::uint8_t* storage, DType stored, std::int64_t at, Tensor& out,
                  std::int64_t i) {
  switch (stored) {
    case DType::i64:
      std::memcpy(out.data<std::int64_t>() + i, storage + 8 * at, 8);
      return;
    case DType::f32:
      std::memcpy(out.data<float>() + i, storage + 4 * at, 4);
      return;
    default: {
      std::uint16_t bits;
      std::memcpy(&bits, storage + 2 * at, 2);
      out.data<float>()[i] = Half::to_float(bits);
      return;
    }
  }
}

// The view's elements in row-major order, from `bytes`: the storage's elements from `first`.
Tensor gather(const Entry& entry, const Storage& storage, const std::vector<std::uint8_t>& bytes,
              std::int64_t first) {
  Tensor out = Tensor::host(entry.shape, entry.dtype);
  const std::int64_t count = out.numel();
  std::vector<std::int64_t> index(entry.shape.size(), 0);
  std::int64_t at = entry.offset - first;
  for (std::int64_t i = 0; i < count; ++i) {
    copy_element(bytes.data(), storage.stored, at, out, i);
    // The next index in row-major order, and its storage position.
    for (std::size_t d = entry.shape.size(); d-- > 0;) {
      if (++index[d] < entry.shape[d]) {
        at += entry.stride[d];
        break;
      }
      at -= (entry.shape[d] - 1) * entry.stride[d];
      index[d] = 0;
    }
  }
  return out;
}

// PyTorch's format before 1.6 (and _use_new_zipfile_serialization=False) is a sequence of
// pickles that begins with LONG1 of its magic number 0x1950a86a20f9469cfc6c.
bool is_legacy_torch_file(std::span<const std::uint8_t> head) {
  return head.size() >= 4 && head[0] == 0x80 && head[2] == 0x8a && head[3] == 0x0a;
}

}  // namespace

TorchStateDict::TorchStateDict(const std::filesystem::path& file,
                               const TorchStateDictLimits& limits)
    : file_(file) {
  const std::vector<std::uint8_t> head =
      InputFile::open_or_refuse(file, "a PyTorch state_dict", limits.file).head(4);
  if (!looks_like_zip(head)) {
    if (is_legacy_torch_file(head))
      throw UsageError(fmt::format(
          "'{}' is a PyTorch file in the legacy format (PyTorch before 1.6, or "
          "_use_new_zipfile_serialization=False); pfc reads the zip format: load it and save "
          "it again with torch.save in PyTorch 1.6 or later",
          file.string()));
    throw UsageError(fmt::format("'{}' is not a file torch.save wrote (a zip archive)",
                                 file.string()));
  }
  archive_ = std::make_unique<ZipArchive>(file, limits.file);
  PickleIndex(file, *archive_, limits).index(entries_, storages_);
}

TorchStateDict::~TorchStateDict() = default;

std::vector<NamedTensor> TorchStateDict::read(const std::set<std::string>& names) const {
  // The wanted tensors by storage, and the span of each storage they reach.
  std::map<std::string, std::vector<std::size_t>> by_storage;
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (names.count(entries_[i].name)) by_storage[entries_[i].storage].push_back(i);
  std::vector<Tensor> values(entries_.size());
  for (const auto& [key, viewers] : by_storage) {
    const Storage& storage = storages_.at(key);
    std::int64_t first = storage.numel, end = 0;
    for (const std::size_t i : viewers) {
      const auto [a, b] = view_span(entries_[i]);
      if (a < b) {
        first = std::min(first, a);
        end = std::max(end, b);
      }
    }
    if (first >= end) first = end = 0;
    const auto element = static_cast<std::uint64_t>(storage.element_size);
    // One storage at a time: only its reached bytes are held while its views are copied.
    const std::vector<std::uint8_t> bytes = archive_->read_part(
        key, static_cast<std::uint64_t>(first) * element, static_cast<std::uint64_t>(end) * element);
    for (const std::size_t i : viewers) values[i] = gather(entries_[i], storage, bytes, first);
  }
  std::vector<NamedTensor> tensors;
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (names.count(entries_[i].name)) tensors.push_back({entries_[i].name, values[i]});
  return tensors;
}

std::vector<NamedTensor> read_torch_state_dict(const std::filesystem::path& file,
                                               const TorchStateDictLimits& limits) {
  const TorchStateDict dict(file, limits);
  std::set<std::string> names;
  for (const TorchStateDict::Entry& entry : dict.entries()) names.insert(entry.name);
  return dict.read(names);
}

}  // namespace pfc
