// `pfc pack IMAGE_DIR OUT_PREFIX [--force]`: builds an insightface RecordIO dataset from a
// folder of identity folders of face JPEGs (layout in data/dataset_packer.h). Everything is
// checked before the first image is read: OUT_PREFIX must name a dataset (DIR/train, not a
// folder), --image-size must be a number of pixels an image of which this host can decode, and
// an existing OUT_PREFIX.rec or .idx is replaced only with --force. The two files are written
// as temporaries (io/staged_file.h) and renamed into place together once both are complete, so
// an error or Ctrl-C leaves an earlier dataset as it was.
#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "app/commands.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "data/aligned_photos.h"
#include "data/dataset_packer.h"
#include "io/output_path.h"
#include "io/staged_file.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

struct PackOptions {
  std::string image_dir;
  std::string out_prefix;
  std::string image_size = "112";
  bool force = false;
  std::string landmarks;
};

// --image-size as a whole number of pixels whose decoding fits in this host's memory (a JPEG
// is decoded to RGB bytes, then to floats: 15 bytes a pixel).
std::int64_t parse_image_size(const std::string& text) {
  std::int64_t size = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), size);
  if (error == std::errc::result_out_of_range)
    throw UsageError(fmt::format("--image-size {} is beyond any image (face crops are 112)",
                                 text));
  if (error != std::errc() || end != text.data() + text.size())
    throw UsageError(fmt::format("--image-size '{}' is not a whole number of pixels", text));
  if (size < 1) throw UsageError(fmt::format("--image-size {} must be positive", size));
  const double needed = 15.0 * static_cast<double>(size) * static_cast<double>(size);
  const HostMemory memory = host_memory_available();
  if (needed > static_cast<double>(memory.available_bytes))
    throw UsageError(fmt::format("--image-size {}: decoding one {}x{} image needs {:.1f} GB, "
                                 "more than the {:.1f} GB this host has available ({}); face "
                                 "crops are 112x112",
                                 size, size, size, needed / 1e9,
                                 static_cast<double>(memory.available_bytes) / 1e9,
                                 memory.source));
  return size;
}

void check_out_prefix(const std::string& prefix, bool force) {
  const fs::path path(prefix);
  const std::string name = path.filename().string();
  if (prefix.empty() || name.empty() || name == "." || name == "..")
    throw UsageError(fmt::format("OUT_PREFIX '{}' names no dataset: give DIR/train, which writes "
                                 "DIR/train.rec and DIR/train.idx",
                                 prefix));
  for (const char* extension : {".rec", ".idx"}) {
    const fs::path file = prefix + extension;
    check_output_path(file, "OUT_PREFIX", {}, OutputFolder::created_if_missing);
    std::error_code ec;
    if (!force && fs::exists(fs::symlink_status(file, ec)))
      throw UsageError(fmt::format("'{}' exists: pfc pack replaces a dataset only with --force",
                                   file.string()));
  }
}

// The folders a pack creates for its output; those still empty are removed again when the pack
// fails, so that a refusal leaves nothing behind.
class NewFolders {
 public:
  explicit NewFolders(const fs::path& folder) {
    for (fs::path f = folder; !f.empty() && !fs::exists(f); f = f.parent_path())
      created_.push_back(f);
    if (!folder.empty()) fs::create_directories(folder);
  }
  ~NewFolders() {
    std::error_code ignored;
    for (const fs::path& f : created_) fs::remove(f, ignored);  // deepest first; empty only
  }
  NewFolders(const NewFolders&) = delete;
  NewFolders& operator=(const NewFolders&) = delete;
  void keep() { created_.clear(); }

 private:
  std::vector<fs::path> created_;
};

int run_pack(const PackOptions& options) {
  int world_size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size != 1)
    throw UsageError(fmt::format("pfc pack runs as a single process, not under {} ranks",
                                 world_size));
  const std::int64_t image_size = parse_image_size(options.image_size);
  check_out_prefix(options.out_prefix, options.force);
  // The landmark file is checked whole before anything is written.
  std::unique_ptr<AlignedPhotos> aligned;
  if (!options.landmarks.empty())
    aligned = std::make_unique<AlignedPhotos>(options.landmarks, options.image_dir, image_size);
  const fs::path rec_path = options.out_prefix + ".rec";
  const fs::path idx_path = options.out_prefix + ".idx";
  NewFolders folders(rec_path.parent_path());
  StagedFile rec(rec_path), idx(idx_path);
  const PackSummary summary = pack_image_folder(
      options.image_dir, {rec.temporary().string(), idx.temporary().string()}, image_size,
      aligned.get());
  commit_staged_files({&rec, &idx});
  folders.keep();

  const std::string folder = rec_path.parent_path().string();
  const bool is_train = rec_path.stem() == "train";
  fmt::print("packed {} images of {} identities into {} and {}", summary.images,
             summary.identities, rec_path.string(), idx_path.string());
  if (summary.left_out > 0) fmt::print(" ({} files left out)", summary.left_out);
  fmt::print("\n");
  if (is_train)
    fmt::print("train with: rec = \"{}\"  num_classes = {}  num_image = {}\n",
               folder.empty() ? "." : folder, summary.identities, summary.images);
  else
    spdlog::warn("a dataset folder holds train.rec and train.idx; use OUT_PREFIX = DIR/train");
  return kExitOk;
}

}  // namespace

CommandRunner add_pack_command(CLI::App& app) {
  auto options = std::make_shared<PackOptions>();
  CLI::App* cmd = app.add_subcommand(
      "pack", "Pack IMAGE_DIR/<identity>/<image>.jpg into OUT_PREFIX.rec and OUT_PREFIX.idx "
              "(insightface's RecordIO layout; OUT_PREFIX = DIR/train makes DIR a dataset)");
  cmd->add_option("IMAGE_DIR", options->image_dir,
                  "folder with one folder per identity (sorted names get labels 0..C-1)")
      ->required();
  cmd->add_option("OUT_PREFIX", options->out_prefix, "output path without .rec/.idx")
      ->required();
  cmd->add_option("--image-size", options->image_size,
                  "width and height every image must have; others are left out (with "
                  "--landmarks: the size of the aligned crops)")
      ->capture_default_str();
  cmd->add_option("--landmarks", options->landmarks,
                  "align raw photos of any size: FILE holds lines 'path x1 y1 ... x5 y5' (path "
                  "relative to IMAGE_DIR; left eye, right eye, nose, mouth corners), and each "
                  "photo is aligned as insightface aligns faces for arcface");
  cmd->add_flag("--force", options->force,
                "replace an existing OUT_PREFIX.rec and OUT_PREFIX.idx (once the new ones are "
                "complete)");
  return [options] { return run_pack(*options); };
}

}  // namespace pfc
