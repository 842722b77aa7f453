// insightface's verification files (lfw.bin, cfp_fp.bin, agedb_30.bin, ...): a pickle of
// (bins, issame_list), 2N encoded images (JPEG, PNG or BMP) and N booleans (or 1/0), image 2i
// and 2i + 1 forming pair i (arcface_torch eval/verification.py, load_bin), written by Python
// 2 or 3 at any protocol from 2. Read through the restricted pickle reader, so nothing in the
// file is ever run.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pfc {

class VerificationBin {
 public:
  // Reads and checks the whole file. A file that is missing, not such a pickle, truncated,
  // holds other objects, an odd number of images or a pair count that disagrees is a
  // UsageError naming the file and the item.
  explicit VerificationBin(const std::string& path);

  const std::string& path() const { return path_; }
  // The file's name without .bin: "lfw", the name arcface_torch's log lines carry.
  const std::string& name() const { return name_; }
  std::int64_t images() const { return static_cast<std::int64_t>(images_.size()); }
  std::int64_t pairs() const { return static_cast<std::int64_t>(issame_.size()); }
  // Encoded image i, a view into the file's bytes (or into what the reader made of them).
  std::span<const std::uint8_t> image(std::int64_t i) const;
  const std::vector<bool>& issame() const { return issame_; }

 private:
  struct Extent {
    std::size_t offset, size;
    bool built;  // in built_ (bytes a Python 3 protocol 2 file stores as _codecs.encode calls)
  };
  std::string path_;
  std::string name_;
  std::vector<std::uint8_t> data_;
  std::vector<std::uint8_t> built_;
  std::vector<Extent> images_;
  std::vector<bool> issame_;
};

// <dir>/<name>.bin
std::string verification_bin_path(const std::string& dir, const std::string& name);

}  // namespace pfc
