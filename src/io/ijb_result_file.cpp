#include "io/ijb_result_file.h"

#include <fmt/format.h>

#include "io/hdf5.h"

namespace pfc {

namespace {

constexpr const char* kTargetAttribute = "ijb_target";

}  // namespace

void write_ijb_result(const std::string& path, const IjbResult& r) {
  h5::File file(path, h5::Mode::create_truncate);
  const hid_t id = file.id();
  h5::write_tensor(id, "/image_features", r.image_features);
  h5::write_tensor(id, "/faceness_scores", r.faceness_scores);
  h5::write_strings(id, "/image_names", r.image_names);
  h5::write_tensor(id, "/image_templates", r.image_templates);
  h5::write_tensor(id, "/image_medias", r.image_medias);
  h5::write_tensor(id, "/templates", r.templates);
  h5::write_tensor(id, "/template_features", r.template_features);
  h5::write_tensor(id, "/scores", r.scores);
  h5::write_tensor(id, "/labels", r.labels);
  h5::write_tensor(id, "/roc/fpr", r.fpr);
  h5::write_tensor(id, "/roc/tpr", r.tpr);
  h5::write_tensor(id, "/roc/thresholds", r.thresholds);
  const IjbSummary& s = r.summary;
  h5::write_attribute(id, "/", kTargetAttribute, s.target);
  h5::write_attribute(id, "/", "root", r.root);
  h5::write_attribute(id, "/", "checkpoint", s.checkpoint);
  h5::write_attribute(id, "/", "step", s.step);
  h5::write_attribute(id, "/", "network", s.network);
  h5::write_attribute(id, "/", "image_size", r.image_size);
  h5::write_attribute(id, "/", "embedding_size", r.embedding_size);
  h5::write_attribute(id, "/", "images", s.images);
  h5::write_attribute(id, "/", "templates", s.templates);
  h5::write_attribute(id, "/", "pairs", s.pairs);
  h5::write_attribute(id, "/", "genuine_pairs", s.genuine_pairs);
  h5::write_attribute(id, "/", "pfc_version", std::string(PFC_VERSION));
  for (std::size_t k = 0; k < kTarAtFarAttributes.size(); ++k)
    h5::write_attribute(id, "/", kTarAtFarAttributes[k], s.tar_at_far[k]);
  h5::write_attribute(id, "/", "auc", s.auc);
  file.close();
}

bool is_ijb_result(const std::string& path) {
  h5::quiet_errors();
  if (H5Fis_hdf5(path.c_str()) <= 0) return false;
  try {
    const h5::File file(path, h5::Mode::read);
    return h5::has_attribute(file.id(), "/", kTargetAttribute);
  } catch (const Error&) {
    return false;
  }
}

IjbSummary read_ijb_summary(const std::string& path) {
  const h5::File file(path, h5::Mode::read);
  const hid_t id = file.id();
  if (!h5::has_attribute(id, "/", kTargetAttribute))
    throw Error(fmt::format("'{}' is not a file of pfc ijb (no {} attribute)", path,
                            kTargetAttribute));
  IjbSummary s;
  s.path = path;
  s.target = h5::read_attribute_string(id, "/", kTargetAttribute);
  s.checkpoint = h5::read_attribute_string(id, "/", "checkpoint");
  s.network = h5::read_attribute_string(id, "/", "network");
  s.step = h5::read_attribute_int(id, "/", "step");
  s.images = h5::read_attribute_int(id, "/", "images");
  s.templates = h5::read_attribute_int(id, "/", "templates");
  s.pairs = h5::read_attribute_int(id, "/", "pairs");
  s.genuine_pairs = h5::read_attribute_int(id, "/", "genuine_pairs");
  for (std::size_t k = 0; k < kTarAtFarAttributes.size(); ++k)
    s.tar_at_far[k] = h5::read_attribute_double(id, "/", kTarAtFarAttributes[k]);
  s.auc = h5::read_attribute_double(id, "/", "auc");
  return s;
}

}  // namespace pfc
