#include "model/backbone_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

namespace pfc {

namespace {

// At most this many differences are named; a wholly different network has hundreds.
constexpr std::size_t kListed = 4;

// What differs between the shapes the network expects and the ones given, by name.
std::vector<std::string> differences(const std::map<std::string, Shape>& expected,
                                     const std::vector<NamedShape>& given, const char* kind) {
  std::vector<std::string> found;
  std::map<std::string, Shape> seen;
  for (const NamedShape& t : given) {
    seen[t.name] = t.shape;
    const auto it = expected.find(t.name);
    if (it == expected.end())
      found.push_back(fmt::format("{} '{}' is not in the network", kind, t.name));
    else if (it->second != t.shape)
      found.push_back(fmt::format("{} '{}' is {} there, {} in the network", kind, t.name,
                                  shape_string(t.shape), shape_string(it->second)));
  }
  for (const auto& [name, shape] : expected)
    if (!seen.count(name)) found.push_back(fmt::format("{} '{}' is missing", kind, name));
  return found;
}

std::vector<NamedShape> shapes_of(const std::vector<NamedTensor>& tensors) {
  std::vector<NamedShape> shapes;
  for (const NamedTensor& t : tensors) shapes.push_back({t.name, t.value.shape()});
  return shapes;
}

}  // namespace

void check_backbone_shapes(const Backbone& backbone, const std::vector<NamedShape>& parameters,
                           const std::vector<NamedShape>& buffers, const std::string& origin) {
  std::map<std::string, Shape> parameter_shapes, buffer_shapes;
  for (const Parameter* p : backbone.parameters()) parameter_shapes[p->name] = p->torch_shape;
  for (const Buffer* b : backbone.buffers()) buffer_shapes[b->name] = b->value.shape();
  std::vector<std::string> problems = differences(parameter_shapes, parameters, "parameter");
  const std::vector<std::string> buffer_problems = differences(buffer_shapes, buffers, "buffer");
  problems.insert(problems.end(), buffer_problems.begin(), buffer_problems.end());
  if (problems.empty()) return;
  const std::size_t total = problems.size();
  if (total > kListed) problems.resize(kListed);
  throw UsageError(fmt::format(
      "{} does not hold the network {}: {}{}", origin, backbone.describe(),
      fmt::join(problems, "; "),
      total > kListed ? fmt::format("; and {} more differences", total - kListed) : ""));
}

void load_backbone_state(Backbone& backbone, const std::vector<NamedTensor>& parameters,
                         const std::vector<NamedTensor>& buffers, const std::string& origin) {
  check_backbone_shapes(backbone, shapes_of(parameters), shapes_of(buffers), origin);
  import_backbone_state(backbone, parameters, buffers);
}

void import_backbone_state(Backbone& backbone, const std::vector<NamedTensor>& parameters,
                           const std::vector<NamedTensor>& buffers) {
  for (const NamedTensor& t : parameters) backbone.import_parameter(t.name, t.value);
  for (const NamedTensor& t : buffers) backbone.import_buffer(t.name, t.value);
}

}  // namespace pfc
