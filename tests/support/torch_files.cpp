#include "support/torch_files.h"

#include <zip.h>

#include <cstring>

#include "core/error.h"

namespace pfc::test {

namespace {

void append(Bytes& out, const std::string& s) { out.insert(out.end(), s.begin(), s.end()); }

void text(Bytes& out, const std::string& s) {  // BINUNICODE
  out.push_back('X');
  const auto n = static_cast<std::uint32_t>(s.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  append(out, s);
}

void integer(Bytes& out, std::int64_t v) {  // BININT
  out.push_back('J');
  const auto u = static_cast<std::uint32_t>(static_cast<std::int32_t>(v));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
}

void integers(Bytes& out, const Shape& values) {
  out.push_back('(');
  for (const std::int64_t v : values) integer(out, v);
  out.push_back('t');
}

}  // namespace

Bytes torch_state_dict_pickle(const std::vector<TorchTensorRecord>& tensors,
                              const std::string& rebuild) {
  Bytes out = {0x80, 0x02};
  append(out, "ccollections\nOrderedDict\n)R(");
  for (const TorchTensorRecord& t : tensors) {
    text(out, t.name);
    append(out, "c" + rebuild + "((");
    text(out, "storage");
    append(out, "ctorch\n" + t.storage_type + "\n");
    text(out, t.key);
    text(out, "cpu");
    integer(out, t.storage_numel);
    append(out, "tQ");
    integer(out, t.offset);
    integers(out, t.size);
    integers(out, t.stride);
    append(out, "\x89" "ccollections\nOrderedDict\n)RtR");
  }
  append(out, "u.");
  return out;
}

void write_zip(const std::string& path,
               const std::vector<std::pair<std::string, Bytes>>& entries) {
  int code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  PFC_CHECK(archive != nullptr, "cannot create {} (libzip error {})", path, code);
  for (const auto& [name, bytes] : entries) {
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    const zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8);
    PFC_CHECK(source != nullptr && index >= 0, "cannot add {} to {}", name, path);
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  }
  // The buffers are read here, while `entries` still holds them.
  PFC_CHECK(zip_close(archive) == 0, "cannot write {}: {}", path, zip_strerror(archive));
}

Bytes float_bytes(const std::vector<float>& values) {
  Bytes out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

}  // namespace pfc::test
