// make_data_source: the config's `rec` picks synthetic data or a RecordIO dataset folder,
// and a dataset's header is checked against num_classes and num_image before training.
#include <spdlog/spdlog.h>

#include "config/config.h"
#include "core/error.h"
#include "data/data_source.h"
#include "data/recordio_data_source.h"
#include "data/synthetic_data_source.h"

namespace pfc {

namespace {

SyntheticLabels synthetic_labels(const std::string& name) {
  if (name == "constant") return SyntheticLabels::constant;
  if (name == "uniform") return SyntheticLabels::uniform;
  throw UsageError(fmt::format("synthetic_labels = \"{}\": expected \"constant\" or \"uniform\"",
                               name));
}

std::unique_ptr<DataSource> make_recordio_source(const Config& cfg, int rank, int world_size,
                                                 Allocator& batch_allocator) {
  auto dataset = std::make_unique<RecordDataset>(cfg.rec);
  if (dataset->num_classes() >= 0 && dataset->num_classes() != cfg.num_classes)
    throw UsageError(fmt::format("num_classes = {} but the header of {} announces {} "
                                 "identities; set num_classes = {}",
                                 cfg.num_classes, dataset->rec_path(), dataset->num_classes(),
                                 dataset->num_classes()));
  if (dataset->num_images() != cfg.num_image)
    throw UsageError(fmt::format("num_image = {} but {} holds {} images; set num_image = {}",
                                 cfg.num_image, dataset->rec_path(), dataset->num_images(),
                                 dataset->num_images()));
  if (rank == 0) spdlog::info("dataset {}", dataset->describe());
  RecordIOSourceOptions options;
  options.batch_size = cfg.batch_size;
  options.image_size = cfg.image_size;
  options.num_classes = cfg.num_classes;
  options.seed = static_cast<std::uint64_t>(cfg.seed);
  options.workers = static_cast<int>(cfg.data_workers);
  return std::make_unique<RecordIODataSource>(std::move(dataset), options, rank, world_size,
                                              batch_allocator);
}

}  // namespace

std::unique_ptr<DataSource> make_data_source(const Config& cfg, int rank, int world_size,
                                             Allocator& batch_allocator) {
  if (cfg.rec != "synthetic") return make_recordio_source(cfg, rank, world_size, batch_allocator);
  SyntheticSourceOptions options;
  options.batch_size = cfg.batch_size;
  options.image_size = cfg.image_size;
  options.num_classes = cfg.num_classes;
  options.num_image = cfg.num_image;
  options.seed = static_cast<std::uint64_t>(cfg.seed);
  options.labels = synthetic_labels(cfg.synthetic_labels);
  return std::make_unique<SyntheticDataSource>(options, rank, world_size, batch_allocator);
}

}  // namespace pfc
