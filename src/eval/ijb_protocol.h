// The files of IJB-B's and IJB-C's 1:1 template verification, as arcface_torch's
// eval_ijbc.py reads them under ROOT (t = ijbb or ijbc):
//   meta/t_face_tid_mid.txt          image_name template_id media_id, one line per image
//   meta/t_name_5pts_score.txt       image_name x1 y1 ... x5 y5 faceness_score, same order
//   meta/t_template_pair_label.txt   template_id template_id label (1 genuine, 0 impostor)
//   loose_crop/image_name            the images (JPEG)
// Everything is checked as it is read: field counts, numbers, finite landmarks that give a
// similarity transform, the two image lists naming the same images in the same order, no
// image twice, pairs naming known templates, genuine and impostor pairs both present. A
// problem is a UsageError naming the file and the line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/face_align.h"

namespace pfc {

enum class IjbTarget { ijbb, ijbc };

// "IJBB" or "IJBC" (as eval_ijbc.py's --target); anything else is a UsageError.
IjbTarget parse_ijb_target(const std::string& text);
const char* ijb_target_name(IjbTarget target);  // "IJBB", "IJBC"
const char* ijb_file_prefix(IjbTarget target);  // "ijbb", "ijbc": the meta files' names

struct IjbFiles {
  std::string root, face_tid_mid, name_5pts_score, template_pair_label, loose_crop;
};
// The paths under root; a missing meta file or loose_crop folder is a UsageError.
IjbFiles ijb_files(const std::string& root, IjbTarget target);

struct IjbImages {
  std::vector<std::string> names;
  std::vector<std::int64_t> template_ids, media_ids;
  std::vector<FivePoints> landmarks;  // as eval_ijbc.py holds them: f32 values
  std::vector<float> faceness;
  // Each image's transform onto the crop (data/face_align.h) for the network's image size.
  std::vector<AffineMatrix> to_crop;
  // The distinct template ids, ascending (np.unique), and each image's index among them.
  std::vector<std::int64_t> templates;
  std::vector<std::int32_t> template_index;

  std::int64_t size() const { return static_cast<std::int64_t>(names.size()); }
};

// An image name is a path under ROOT/loose_crop/; one that leads outside ROOT (an absolute
// path elsewhere, or "../" steps) is refused with its line, unless `images_outside_root` (the
// user's --images-outside-root) allows it: a list from elsewhere must not make pfc read files
// it was not pointed at.
IjbImages read_ijb_images(const IjbFiles& files, std::int64_t image_size,
                          bool images_outside_root = false);

// Pairs as indices into IjbImages::templates: 9 bytes a pair (IJB-C's 15.7 million: 141 MB).
struct IjbPairs {
  std::vector<std::int32_t> first, second;
  std::vector<std::uint8_t> labels;
  std::int64_t genuine = 0;

  std::int64_t size() const { return static_cast<std::int64_t>(labels.size()); }
};

IjbPairs read_ijb_pairs(const IjbFiles& files, const std::vector<std::int64_t>& templates);

}  // namespace pfc
