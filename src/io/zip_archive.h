// A zip archive opened for reading through Debian's libzip: the names of its entries and the
// bytes of one. What pfc reads of PyTorch's files (torch.save writes a zip archive of a pickle
// and one entry per tensor storage). The archive's consistency and every entry's CRC are
// checked by libzip; any failure is a UsageError naming the file and the entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

struct zip;

namespace pfc {

class ZipArchive {
 public:
  // Throws a UsageError naming `path` when it is not a readable zip archive.
  explicit ZipArchive(const std::filesystem::path& path);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Every entry's name, in the archive's order.
  const std::vector<std::string>& names() const { return names_; }
  bool contains(const std::string& name) const;
  // The uncompressed size of an entry, as its directory records it.
  std::uint64_t size(const std::string& name) const;
  // The whole entry, uncompressed and checked against its CRC.
  std::vector<std::uint8_t> read(const std::string& name) const;

 private:
  std::int64_t index(const std::string& name) const;

  std::filesystem::path path_;
  zip* archive_ = nullptr;
  std::vector<std::string> names_;
};

// Whether a file begins as a zip archive does ("PK\3\4", or "PK\5\6" when it is empty).
bool looks_like_zip(const std::filesystem::path& path);

}  // namespace pfc
