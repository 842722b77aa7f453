// `pfc pack IMAGE_DIR OUT_PREFIX`: builds an insightface RecordIO dataset from a folder of
// identity folders of face JPEGs (layout in data/dataset_packer.h).
#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
#include <string>

#include "app/commands.h"
#include "core/error.h"
#include "data/aligned_photos.h"
#include "data/dataset_packer.h"

namespace pfc {

namespace {

struct PackOptions {
  std::string image_dir;
  std::string out_prefix;
  std::int64_t image_size = 112;
  std::string landmarks;
};

int run_pack(const PackOptions& options) {
  int world_size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size != 1)
    throw UsageError(fmt::format("pfc pack runs as a single process, not under {} ranks",
                                 world_size));
  std::unique_ptr<AlignedPhotos> aligned;
  if (!options.landmarks.empty())
    aligned = std::make_unique<AlignedPhotos>(options.landmarks, options.image_dir,
                                              options.image_size);
  const PackSummary summary = pack_image_folder(options.image_dir, options.out_prefix,
                                                options.image_size, aligned.get());
  const std::string folder = std::filesystem::path(options.out_prefix).parent_path().string();
  const bool is_train = std::filesystem::path(options.out_prefix).filename() == "train";
  fmt::print("packed {} images of {} identities into {} and {}", summary.images,
             summary.identities, summary.rec_path, summary.idx_path);
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
  return [options] { return run_pack(*options); };
}

}  // namespace pfc
