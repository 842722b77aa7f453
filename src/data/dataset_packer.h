// Packs a folder of face images into an insightface RecordIO dataset (what `pfc pack` runs).
//
// IMAGE_DIR holds one folder per identity; the folders, sorted by name, get labels 0..C-1.
// Each holds that identity's JPEGs (*.jpg, *.jpeg, any case), taken in name order. Every
// image is decoded once to check it: files that are not clean JPEGs of image_size x
// image_size are left out with a warning. The output, a .rec and an .idx file (`pfc pack` writes
// OUT_PREFIX.rec and OUT_PREFIX.idx), is laid out as insightface's own datasets (see
// data/image_record.h):
//   key 0            header: flag 2, labels [N + 1, N + 1 + C)
//   keys 1 .. N      images in identity order: flag 0, label = identity, id = key, the JPEG
//   keys N+1 .. N+C  one per identity: flag 2, labels [its first image key, end key), id = key
// so OUT_PREFIX = DIR/train makes DIR a dataset folder for `rec = DIR`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pfc {

struct PackSummary {
  std::int64_t identities = 0;
  std::int64_t images = 0;
  std::int64_t left_out = 0;        // files that were not usable JPEGs
  std::int64_t split_records = 0;   // records stored in several parts (see data/recordio.h)
};

// The files pack_image_folder writes (created or truncated; their folder must exist).
struct PackFiles {
  std::string rec_path;
  std::string idx_path;
};

// What a record stores for an image file, when it is not the file's own bytes (pack's
// default: a clean image_size x image_size JPEG stored as it is). `pfc pack --landmarks`
// aligns raw photos instead (data/aligned_photos.h).
class PackedImageMaker {
 public:
  virtual ~PackedImageMaker() = default;
  // Whether `file` can be stored; false leaves it out with `why` as the warning.
  virtual bool check(const std::filesystem::path& file, std::string& why) = 0;
  // The JPEG to store for a file that passed check().
  virtual std::vector<std::uint8_t> bytes(const std::filesystem::path& file) = 0;
};

// Throws UsageError for an unusable IMAGE_DIR (missing, no identity folders, too many keys
// for the float32 labels of the format) and Error for I/O failures.
PackSummary pack_image_folder(const std::string& image_dir, const PackFiles& files,
                              std::int64_t image_size, PackedImageMaker* maker = nullptr);
// Writes OUT_PREFIX.rec and OUT_PREFIX.idx directly (their folder created), for tests and
// tools; `pfc pack` writes temporaries and renames them into place (app/command_pack.cpp).
PackSummary pack_image_folder(const std::string& image_dir, const std::string& out_prefix,
                              std::int64_t image_size, PackedImageMaker* maker = nullptr);

}  // namespace pfc
