#include "eval/ijb_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <unordered_map>

#include "core/error.h"
#include "core/input_file.h"
#include "data/field_file.h"

namespace pfc {

namespace fs = std::filesystem;

IjbTarget parse_ijb_target(const std::string& text) {
  std::string upper = text;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "IJBC") return IjbTarget::ijbc;
  if (upper == "IJBB") return IjbTarget::ijbb;
  throw UsageError(fmt::format("--target '{}': use IJBC or IJBB", text));
}

const char* ijb_target_name(IjbTarget target) {
  return target == IjbTarget::ijbc ? "IJBC" : "IJBB";
}

const char* ijb_file_prefix(IjbTarget target) {
  return target == IjbTarget::ijbc ? "ijbc" : "ijbb";
}

IjbFiles ijb_files(const std::string& root, IjbTarget target) {
  const std::string t = ijb_file_prefix(target);
  const fs::path meta = fs::path(root) / "meta";
  IjbFiles files{root, (meta / (t + "_face_tid_mid.txt")).string(),
                 (meta / (t + "_name_5pts_score.txt")).string(),
                 (meta / (t + "_template_pair_label.txt")).string(),
                 (fs::path(root) / "loose_crop").string()};
  if (!fs::is_directory(root))
    throw UsageError(fmt::format("IJB root '{}' is not a folder", root));
  for (const std::string* file :
       {&files.face_tid_mid, &files.name_5pts_score, &files.template_pair_label})
    if (const std::string kind = non_file_kind(*file); !kind.empty())
      throw UsageError(fmt::format("'{}' {}: an {} root holds the files "
                                   "meta/{}_face_tid_mid.txt, meta/{}_name_5pts_score.txt, "
                                   "meta/{}_template_pair_label.txt and the folder loose_crop/",
                                   *file, kind == "does not exist" ? "is missing" : kind,
                                   ijb_target_name(target), t, t, t));
  if (!fs::is_directory(files.loose_crop))
    throw UsageError(fmt::format("'{}' is missing: the images of {} are in ROOT/loose_crop/",
                                 files.loose_crop, ijb_target_name(target)));
  return files;
}

namespace {

// Whether the image `name` of loose_crop/ lies under ROOT, by the names alone.
bool under_root(const IjbFiles& files, const std::string& name) {
  const fs::path root = fs::absolute(files.root).lexically_normal();
  const fs::path image = fs::absolute(fs::path(files.loose_crop) / name).lexically_normal();
  const fs::path relative = image.lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

void read_templates_and_medias(const IjbFiles& files, bool images_outside_root,
                               IjbImages& images) {
  FieldFile in(files.face_tid_mid, "image list");
  std::unordered_map<std::string, std::int64_t> line_of;
  while (in.next()) {
    in.expect_fields(3, "image_name template_id media_id");
    std::string name(in.fields()[0]);
    if (!images_outside_root && !under_root(files, name))
      in.fail(fmt::format("image '{}' lies outside the IJB root '{}' ({}); pfc ijb reads only "
                          "the images under it unless --images-outside-root is given",
                          name, files.root,
                          fs::path(name).is_absolute() ? "an absolute path"
                                                        : "its '..' steps lead out"));
    const auto [at, inserted] = line_of.emplace(name, in.line_number());
    if (!inserted)
      in.fail(fmt::format("image '{}' is listed a second time (first on line {})", name,
                          at->second));
    images.template_ids.push_back(in.integer(1, "template_id"));
    images.media_ids.push_back(in.integer(2, "media_id"));
    images.names.push_back(std::move(name));
  }
  if (images.names.empty())
    throw UsageError(fmt::format("image list '{}' lists no images", files.face_tid_mid));
}

void read_landmarks(const IjbFiles& files, std::int64_t image_size, IjbImages& images) {
  FieldFile in(files.name_5pts_score, "landmark list");
  const FivePoints crop_points = arcface_template(image_size);
  const auto n = images.names.size();
  std::size_t i = 0;
  while (in.next()) {
    in.expect_fields(12, "image_name x1 y1 x2 y2 x3 y3 x4 y4 x5 y5 faceness_score");
    if (i >= n)
      in.fail(fmt::format("more lines than the {} images of '{}'", n, files.face_tid_mid));
    if (in.fields()[0] != images.names[i])
      in.fail(fmt::format("names image '{}' where line {} of '{}' names '{}' (the two lists "
                          "give the images in the same order)",
                          in.fields()[0], i + 1, files.face_tid_mid, images.names[i]));
    FivePoints points{};
    for (std::size_t k = 0; k < 10; ++k) {
      // eval_ijbc.py holds the landmarks as float32.
      const auto value = static_cast<float>(in.number(1 + k, k % 2 == 0 ? "x" : "y"));
      if (!std::isfinite(value))
        in.fail(fmt::format("landmark {} has {} = {}", k / 2 + 1, k % 2 == 0 ? "x" : "y",
                            in.fields()[1 + k]));
      points[k / 2][k % 2] = value;
    }
    const auto faceness = static_cast<float>(in.number(11, "faceness_score"));
    if (!std::isfinite(faceness))
      in.fail(fmt::format("faceness_score {} is not a finite number", in.fields()[11]));
    AffineMatrix to_crop{};
    std::string why;
    if (!fit_similarity(points, crop_points, to_crop, why)) in.fail(why);
    images.landmarks.push_back(points);
    images.faceness.push_back(faceness);
    images.to_crop.push_back(to_crop);
    ++i;
  }
  if (i != n)
    throw UsageError(fmt::format("landmark list '{}' has {} lines for the {} images of '{}'",
                                 files.name_5pts_score, i, n, files.face_tid_mid));
}

}  // namespace

IjbImages read_ijb_images(const IjbFiles& files, std::int64_t image_size,
                          bool images_outside_root) {
  IjbImages images;
  read_templates_and_medias(files, images_outside_root, images);
  read_landmarks(files, image_size, images);
  images.templates = images.template_ids;
  std::sort(images.templates.begin(), images.templates.end());
  images.templates.erase(std::unique(images.templates.begin(), images.templates.end()),
                         images.templates.end());
  for (const std::int64_t id : images.template_ids)
    images.template_index.push_back(static_cast<std::int32_t>(
        std::lower_bound(images.templates.begin(), images.templates.end(), id) -
        images.templates.begin()));
  return images;
}

IjbPairs read_ijb_pairs(const IjbFiles& files, const std::vector<std::int64_t>& templates) {
  FieldFile in(files.template_pair_label, "pair list");
  IjbPairs pairs;
  const auto index_of = [&](std::size_t field) {
    const std::int64_t id = in.integer(field, "template_id");
    const auto at = std::lower_bound(templates.begin(), templates.end(), id);
    if (at == templates.end() || *at != id)
      in.fail(fmt::format("template {} is not in the image list '{}'", id, files.face_tid_mid));
    return static_cast<std::int32_t>(at - templates.begin());
  };
  while (in.next()) {
    in.expect_fields(3, "template_id template_id label");
    pairs.first.push_back(index_of(0));
    pairs.second.push_back(index_of(1));
    const std::int64_t label = in.integer(2, "label");
    if (label != 0 && label != 1)
      in.fail(fmt::format("label {} is neither 1 (genuine) nor 0 (impostor)", label));
    pairs.labels.push_back(static_cast<std::uint8_t>(label));
    pairs.genuine += label;
  }
  if (pairs.genuine == 0 || pairs.genuine == pairs.size())
    throw UsageError(fmt::format("pair list '{}' has {} genuine and {} impostor pairs: a ROC "
                                 "needs both",
                                 files.template_pair_label, pairs.genuine,
                                 pairs.size() - pairs.genuine));
  return pairs;
}

}  // namespace pfc
