#include "eval/verification_bin.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/error.h"
#include "core/input_file.h"
#include "eval/pickle_reader.h"

namespace pfc {

namespace {

using Kind = PickleObject::Kind;

bool is_sequence(const PickleObject& o) { return o.kind == Kind::list || o.kind == Kind::tuple; }

std::vector<std::uint8_t> read_whole_file(const std::string& path) {
  std::string why;
  std::vector<std::uint8_t> bytes;
  if (!read_input_file(path, {}, bytes, why))
    throw UsageError(fmt::format("verification file '{}' {}", path, why));
  return bytes;
}

}  // namespace

VerificationBin::VerificationBin(const std::string& path)
    : path_(path), name_(std::filesystem::path(path).stem().string()),
      data_(read_whole_file(path)) {
  const auto refuse = [&](const std::string& why) {
    throw UsageError(fmt::format("verification file '{}': {}", path_, why));
  };
  PickleDocument doc;
  try {
    doc = parse_pickle(data_);
  } catch (const UsageError& e) {
    refuse(e.what());
  }
  // load_bin unpacks it as `bins, issame_list = pickle.load(f)`.
  const PickleObject& root = doc.at(doc.root);
  if (!is_sequence(root) || root.items.size() != 2)
    refuse(fmt::format("the pickle holds {}, not (images, issame_list)",
                       describe_pickle_object(root)));
  const PickleObject& bins = doc.at(root.items[0]);
  const PickleObject& same = doc.at(root.items[1]);
  if (!is_sequence(bins))
    refuse(fmt::format("its first item is {}, not a list of encoded images",
                       describe_pickle_object(bins)));
  if (!is_sequence(same))
    refuse(fmt::format("its second item is {}, not a list of booleans",
                       describe_pickle_object(same)));
  for (std::size_t i = 0; i < bins.items.size(); ++i) {
    const PickleObject& image = doc.at(bins.items[i]);
    if (image.kind != Kind::bytes)
      refuse(fmt::format("image {} is {}, not the bytes of an encoded image", i,
                         describe_pickle_object(image)));
    images_.push_back({image.offset, image.size, image.built});
  }
  for (std::size_t i = 0; i < same.items.size(); ++i) {
    // Booleans, or the integers 0 and 1 that some writers store instead.
    const PickleObject& flag = doc.at(same.items[i]);
    const bool zero_or_one =
        flag.kind == Kind::integer && (flag.integer == 0 || flag.integer == 1);
    if (flag.kind != Kind::boolean && !zero_or_one)
      refuse(fmt::format("issame_list item {} is {}, not True or False (or 1 or 0)", i,
                         describe_pickle_object(flag)));
    issame_.push_back(flag.kind == Kind::boolean ? flag.value : flag.integer == 1);
  }
  built_ = std::move(doc.built);
  if (images_.size() % 2 != 0)
    refuse(fmt::format("it holds an odd number of images ({}); pairs need two each",
                       images_.size()));
  if (images_.size() != 2 * issame_.size())
    refuse(fmt::format("it holds {} images for {} pairs; {} pairs need {} images",
                       images_.size(), issame_.size(), issame_.size(), 2 * issame_.size()));
  if (issame_.empty()) refuse("it holds no pairs");
}

std::span<const std::uint8_t> VerificationBin::image(std::int64_t i) const {
  const Extent& e = images_.at(static_cast<std::size_t>(i));
  return {(e.built ? built_ : data_).data() + e.offset, e.size};
}

std::string verification_bin_path(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / (name + ".bin")).string();
}

}  // namespace pfc
