// The HDF5 file `pfc ijb` writes: one IJB-B or IJB-C 1:1 verification of one checkpoint,
// everything eval_ijbc.py computes on the way to its table (README, "IJB-B and IJB-C"):
//   /image_features      [images, emb] f32  embedding + mirror image's, before the faceness score
//   /faceness_scores     [images] f32
//   /image_names         [images] strings; /image_templates, /image_medias [images] i64
//   /templates           [templates] i64    the template ids, ascending
//   /template_features   [templates, emb] f64  pooled and L2-normalised
//   /scores              [pairs] f64        in the pair list's order
//   /labels              [pairs] u8         1 genuine, 0 impostor
//   /roc/fpr, /roc/tpr, /roc/thresholds     sklearn's roc_curve (thresholds[0] = +inf)
//   attributes of /: ijb_target ("IJBB" | "IJBC"), root, checkpoint, step, network,
//     image_size, embedding_size, images, templates, pairs, genuine_pairs, pfc_version,
//     tar_at_far_1e-6 ... tar_at_far_1e-1 (fractions), auc
// `pfc report` finds these files by their ijb_target attribute.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace pfc {

// The target FARs of eval_ijbc.py's table, 1e-6 ... 1e-1; their column titles as the script
// prints them (Python's str of 10 ** -k); the attributes holding the TAR at each.
inline constexpr std::array<double, 6> kIjbFars = {1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1};
inline constexpr std::array<const char*, 6> kIjbFarTitles = {"1e-06", "1e-05", "0.0001",
                                                             "0.001", "0.01",  "0.1"};
inline constexpr std::array<const char*, 6> kTarAtFarAttributes = {
    "tar_at_far_1e-6", "tar_at_far_1e-5", "tar_at_far_1e-4",
    "tar_at_far_1e-3", "tar_at_far_1e-2", "tar_at_far_1e-1"};

struct IjbSummary {
  std::string path;
  std::string target, checkpoint, network;
  std::int64_t step = 0, images = 0, templates = 0, pairs = 0, genuine_pairs = 0;
  std::array<double, 6> tar_at_far{};
  double auc = 0;
};

// Everything the file holds; the tensors are host tensors of the layout's shapes and types.
struct IjbResult {
  IjbSummary summary;
  std::string root;
  std::int64_t image_size = 0, embedding_size = 0;
  std::vector<std::string> image_names;
  Tensor image_features, faceness_scores, image_templates, image_medias;
  Tensor templates, template_features, scores, labels;
  Tensor fpr, tpr, thresholds;
};

// Writes a new file at `path` (created or truncated; the caller writes to a temporary name
// and renames). Throws pfc::Error naming the file on failure.
void write_ijb_result(const std::string& path, const IjbResult& result);

// Whether `path` is a file that write_ijb_result wrote (an HDF5 file with ijb_target).
bool is_ijb_result(const std::string& path);
// Its summary; pfc::Error naming the file when it is not one.
IjbSummary read_ijb_summary(const std::string& path);

}  // namespace pfc
