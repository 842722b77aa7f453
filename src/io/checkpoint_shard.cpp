#include "io/checkpoint_shard.h"

#include <fmt/format.h>

#include "io/hdf5.h"

namespace pfc {

ShardExtent read_shard_extent(const std::filesystem::path& file, std::int64_t embedding_size,
                              const std::vector<std::string>& moments) {
  PFC_CHECK(std::filesystem::is_regular_file(file), "checkpoint shard '{}' is missing",
            file.string());
  const h5::File shard(file.string(), h5::Mode::read);
  ShardExtent extent;
  extent.class_start = h5::read_attribute_int(shard.id(), "/", "class_start");
  extent.num_local = h5::read_attribute_int(shard.id(), "/", "num_local");
  const Shape expected{extent.num_local, embedding_size};
  std::vector<std::string> datasets{"/weight"};
  for (const std::string& m : moments) datasets.push_back("/" + m);
  for (const std::string& dataset : datasets) {
    PFC_CHECK(h5::exists(shard.id(), dataset), "checkpoint shard '{}' has no {}", file.string(),
              dataset);
    const Shape shape = h5::dataset_shape(shard.id(), dataset);
    PFC_CHECK(shape == expected, "checkpoint shard '{}': {} is {}, expected {}", file.string(),
              dataset, shape_string(shape), shape_string(expected));
  }
  return extent;
}

}  // namespace pfc
