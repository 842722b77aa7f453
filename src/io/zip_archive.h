// A zip archive opened for reading through Debian's libzip: the names of its entries and the
// bytes of one. What pfc reads of PyTorch's files (torch.save writes a zip archive of a pickle
// and one entry per tensor storage). The file is opened as every untrusted input is
// (core/input_file.h: a regular file within the caller's limit), the archive's consistency and
// every entry's CRC are checked by libzip, and no size the directory claims is trusted: an
// entry's compressed size must fit in the file, and its size must be what its compression can
// make of that (stored: the same; deflate: at most 1032 times). Any failure is a UsageError
// naming the file and the entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/input_file.h"

struct zip;

namespace pfc {

class ZipArchive {
 public:
  // Throws a UsageError naming `path` when it is not a readable zip archive, or not a regular
  // file within `limit`.
  ZipArchive(const std::filesystem::path& path, const InputFileLimit& limit);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Every entry's name, in the archive's order.
  const std::vector<std::string>& names() const { return names_; }
  bool contains(const std::string& name) const;
  // The uncompressed size of an entry, as its directory records it, once checked to be one its
  // compressed bytes in the file can make.
  std::uint64_t size(const std::string& name) const;
  // The whole entry, uncompressed and checked against its CRC.
  std::vector<std::uint8_t> read(const std::string& name) const;
  // Bytes [begin, end) of the entry, uncompressed; what lies before `begin` is decompressed
  // and dropped, what follows `end` not read (the CRC is checked when `end` is the entry's
  // size).
  std::vector<std::uint8_t> read_part(const std::string& name, std::uint64_t begin,
                                      std::uint64_t end) const;

 private:
  std::int64_t index(const std::string& name) const;

  std::filesystem::path path_;
  std::uint64_t file_size_ = 0;
  zip* archive_ = nullptr;
  std::vector<std::string> names_;
};

// Whether a file's first bytes are a zip archive's ("PK\3\4", or "PK\5\6" when it is empty).
bool looks_like_zip(std::span<const std::uint8_t> head);

}  // namespace pfc
