#include "eval/onnx_backbone_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/half.h"

namespace pfc {

namespace {

// Nodes that compute no data of their own need no counterpart in the network: value aliases
// (Identity; Dropout in inference mode), Constant, Shape (it reads only a value's shape) and
// any node all of whose inputs are constants or shapes: the arithmetic of the shapes a Reshape
// takes (torch.onnx computes them so when the batch dimension is dynamic).
const std::set<std::string> kAliasOps = {"Identity", "Dropout"};

std::string shape_of(const onnx::TensorProto& t) {
  Shape dims(t.dims().begin(), t.dims().end());
  return shape_string(dims);
}

// An integer constant's values (a shape, an axis, an index); nullopt for another type.
std::optional<std::vector<std::int64_t>> integers(const onnx::TensorProto& t) {
  std::vector<std::int64_t> v;
  const std::string& raw = t.raw_data();
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (raw.empty()) return std::vector<std::int64_t>(t.int64_data().begin(), t.int64_data().end());
    v.resize(raw.size() / 8);
    std::memcpy(v.data(), raw.data(), v.size() * 8);
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    if (raw.empty()) return std::vector<std::int64_t>(t.int32_data().begin(), t.int32_data().end());
    std::vector<std::int32_t> narrow(raw.size() / 4);
    std::memcpy(narrow.data(), raw.data(), narrow.size() * 4);
    v.assign(narrow.begin(), narrow.end());
  } else {
    return std::nullopt;
  }
  return v;
}

// The one value of type T a constant holds, in its raw bytes or its typed field `values`.
template <class T, class Repeated>
std::optional<double> single_value(const std::string& raw, const Repeated& values) {
  if (raw.empty()) return values.size() == 1 ? std::optional<double>(values[0]) : std::nullopt;
  T v;
  if (raw.size() != sizeof v) return std::nullopt;
  std::memcpy(&v, raw.data(), sizeof v);
  return v;
}

// A one-element float or double constant's value (eps, a scale, Clip's bounds).
std::optional<double> float_scalar(const onnx::TensorProto& t) {
  if (t.data_type() == onnx::TensorProto::FLOAT)
    return single_value<float>(t.raw_data(), t.float_data());
  if (t.data_type() == onnx::TensorProto::DOUBLE)
    return single_value<double>(t.raw_data(), t.double_data());
  return std::nullopt;
}

bool close_to(double value, double expected) {
  return std::abs(value - expected) <= 1e-6 * std::abs(expected);
}

// A constant's element count; nullopt for a negative dimension or a count beyond 64 bits.
std::optional<std::int64_t> element_count(const onnx::TensorProto& t) {
  std::int64_t n = 1;
  for (const std::int64_t d : t.dims()) {
    if (d < 0) return std::nullopt;
    if (d == 0) n = 0;
    if (n != 0 && d > std::numeric_limits<std::int64_t>::max() / n) return std::nullopt;
    n *= d;
  }
  return n;
}

class GraphMatcher final : public InferenceGraph {
 public:
  GraphMatcher(const onnx::GraphProto& graph, const std::filesystem::path& file,
               const Backbone& network)
      : graph_(graph), file_(file), network_(network), matched_(graph.node_size(), false) {
    for (const onnx::TensorProto& t : graph.initializer()) constants_[t.name()] = &t;
    std::unordered_map<std::string, int> alias_node;  // an alias's value -> the node making it
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& node = graph.node(i);
      if (kAliasOps.count(node.op_type()) && node.input_size() >= 1 && node.output_size() >= 1) {
        alias_[node.output(0)] = node.input(0);
        alias_node[node.output(0)] = i;
      }
      if (node.op_type() == "Constant" && node.output_size() == 1)
        for (const onnx::AttributeProto& a : node.attribute())
          if (a.name() == "value" && a.has_t()) constants_[node.output(0)] = &a.t();
    }
    resolve_aliases(alias_node);
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& node = graph.node(i);
      for (const std::string& input : node.input())
        if (!input.empty()) consumers_[resolve(input)].push_back(i);
      for (const std::string& output : node.output()) producer_[output] = i;
    }
    find_shape_values();
  }

  GraphValue input() {
    std::vector<std::string> inputs;
    for (const onnx::ValueInfoProto& v : graph_.input())
      if (!constants_.count(v.name())) inputs.push_back(v.name());
    if (inputs.size() != 1)
      fail(fmt::format("its graph has {} inputs ({}); a face model has one, the images",
                       inputs.size(), fmt::join(inputs, ", ")));
    return value(inputs[0]);
  }

  OnnxBackbone finish(GraphValue output) {
    if (graph_.output_size() != 1)
      fail(fmt::format("its graph has {} outputs; a face model has one, the embeddings",
                       graph_.output_size()));
    if (resolve(graph_.output(0).name()) != name(output))
      fail(fmt::format("the network's embeddings are '{}' in its graph, but the graph's output "
                       "is '{}'",
                       name(output), graph_.output(0).name()));
    if (!conv_bias_.empty())
      fail(fmt::format("its Conv producing '{}' has a bias, which the network's convolution "
                       "lacks",
                       name(GraphValue{conv_bias_.begin()->first})));
    for (int i = 0; i < graph_.node_size(); ++i) {
      const onnx::NodeProto& node = graph_.node(i);
      if (!matched_[i] && !kAliasOps.count(node.op_type()) && !computes_shapes(node))
        fail(fmt::format("its graph has a {} node '{}' (on '{}') that the network {} lacks: "
                         "the model holds another network",
                         node.op_type(), node.name(), node.input_size() ? node.input(0) : "",
                         network_.describe()));
    }
    return {std::move(tensors_), folded_, {}};
  }

  GraphValue convolution(GraphValue x, const NamedTensor& weight, const NamedTensor* bias,
                         const ConvolutionSpec& spec) override {
    const onnx::NodeProto& node = consumer(x, {"Conv"}, weight);
    const std::int64_t k = spec.kernel, s = spec.stride, p = spec.pad;
    check_attribute(node, "strides", {s, s}, weight);
    check_attribute(node, "pads", {p, p, p, p}, weight);
    check_attribute(node, "dilations", {1, 1}, weight);
    check_attribute(node, "kernel_shape", {k, k}, weight);
    check_attribute(node, "group", {spec.groups}, weight);
    if (const onnx::AttributeProto* pad = attribute(node, "auto_pad");
        pad && pad->s() != "NOTSET")
      mismatch(node, weight, fmt::format("auto_pad {}", pad->s()));
    take(weight, node.input(1), node);
    const GraphValue out = value(node.output(0));
    const bool has_bias = node.input_size() >= 3 && !node.input(2).empty();
    if (bias != nullptr) {
      if (!has_bias) mismatch(node, weight, "no bias, which the network's convolution has");
      take(*bias, node.input(2), node);
    } else if (has_bias) {
      conv_bias_[out.id] = tensor(node.input(2), Shape{weight.value.dim(0)}, weight, node);
    }
    return out;
  }

  GraphValue batch_norm(GraphValue x, const NamedTensor& scale, const NamedTensor& shift,
                        const NamedTensor& running_mean, const NamedTensor& running_var,
                        double eps) override {
    const std::optional<Tensor> bias = take_conv_bias(x);
    std::string output;
    const onnx::NodeProto* node = find_batch_norm(x, output);
    if (node == nullptr) {
      if (!bias)
        missing(x, "BatchNormalization", running_mean);
      // Folded into the convolution before it: the identity after the folded bias.
      ++folded_;
      const std::int64_t c = scale.value.numel();
      tensors_.push_back({scale.name, filled(c, 1.0)});
      tensors_.push_back({shift.name, *bias});
      tensors_.push_back({running_mean.name, filled(c, 0.0)});
      tensors_.push_back({running_var.name, filled(c, 1.0 - eps)});
      return x;
    }
    const onnx::AttributeProto* epsilon = attribute(*node, "epsilon");
    const double theirs = epsilon ? epsilon->f() : 1e-5;
    if (std::abs(theirs - eps) > 1e-6 * eps)
      mismatch(*node, running_mean, fmt::format("epsilon {} where the network has {}", theirs,
                                                eps));
    take(scale, node->input(1), *node);
    take(shift, node->input(2), *node);
    take(running_mean, node->input(3), *node);
    take(running_var, node->input(4), *node);
    // A convolution's bias before a batch norm only moves the mean the norm subtracts.
    if (bias) {
      float* mean = tensors_[tensors_.size() - 2].value.data<float>();
      for (std::int64_t i = 0; i < bias->numel(); ++i) mean[i] -= bias->data<float>()[i];
    }
    return value(output);
  }

  GraphValue prelu(GraphValue x, const NamedTensor& slope) override {
    no_conv_bias(x, slope);
    const onnx::NodeProto& node = consumer(x, {"PRelu"}, slope);
    const onnx::TensorProto& t = constant(node.input(1), slope, node);
    // torch.onnx gives the slopes as [C, 1, 1] to broadcast over the image.
    Shape dims(t.dims().begin(), t.dims().end());
    const std::optional<std::int64_t> count = element_count(t);
    if (!count)
      mismatch(node, slope, fmt::format("slopes {}, whose element count is not a 64-bit count",
                                        shape_of(t)));
    const bool per_channel = *count == slope.value.numel() &&
                             (dims.empty() || dims[0] == slope.value.numel() ||
                              (dims.size() == 4 && dims[1] == slope.value.numel()));
    if (!per_channel)
      mismatch(node, slope, fmt::format("slopes {}", shape_of(t)));
    tensors_.push_back({slope.name, convert(t, slope.value.shape(), slope)});
    return value(node.output(0));
  }

  GraphValue add(GraphValue a, GraphValue b) override {
    const std::string other = name(b);
    for (const int i : consumers(a)) {
      const onnx::NodeProto& node = graph_.node(i);
      if (matched_[i] || node.op_type() != "Add" || node.input_size() != 2) continue;
      const std::string x = resolve(node.input(0)), y = resolve(node.input(1));
      if ((x == name(a) && y == other) || (y == name(a) && x == other)) {
        matched_[i] = true;
        return value(node.output(0));
      }
    }
    fail(fmt::format("the network adds '{}' and '{}' (after '{}'), and its graph has no Add of "
                     "the two: the model holds another network",
                     name(a), other, last_tensor_));
  }

  GraphValue flatten(GraphValue x) override {
    const onnx::NodeProto* node = find_consumer(x, {"Flatten", "Reshape"});
    if (node == nullptr) missing(x, "Flatten or Reshape", std::nullopt);
    if (node->op_type() == "Flatten") {
      const onnx::AttributeProto* axis = attribute(*node, "axis");
      if (axis && axis->i() != 1)
        fail(fmt::format("its Flatten '{}' has axis {}; the network flattens from axis 1",
                         node->name(), axis->i()));
    } else {
      check_reshape(*node, {std::nullopt, std::nullopt}, "[N, features]");
    }
    return value(node->output(0));
  }

  GraphValue linear(GraphValue x, const NamedTensor& weight, const NamedTensor* bias) override {
    const onnx::NodeProto& node = consumer(x, {"Gemm", "MatMul"}, weight);
    const std::int64_t out = weight.value.dim(0), in = weight.value.dim(1);
    if (node.op_type() == "MatMul") {
      // x [n, in] times [in, out].
      tensors_.push_back({weight.name, transposed(constant(node.input(1), weight, node), in,
                                                  out, weight, node)});
      GraphValue y = value(node.output(0));
      if (bias == nullptr) return with_width(y, out);
      // The bias comes in an Add of y and a constant, in either order.
      std::string b;
      const onnx::NodeProto* add = find_with_constant(y, "Add", b);
      if (add == nullptr) missing(y, "Add of a bias", *bias);
      tensors_.push_back({bias->name, tensor(b, Shape{out}, *bias, *add)});
      return with_width(value(add->output(0)), out);
    }
    for (const char* a : {"alpha", "beta"})
      if (const onnx::AttributeProto* p = attribute(node, a); p && p->f() != 1.0f)
        mismatch(node, weight, fmt::format("{} {}", a, p->f()));
    if (const onnx::AttributeProto* p = attribute(node, "transA"); p && p->i() != 0)
      mismatch(node, weight, "transA 1");
    const onnx::AttributeProto* trans_b = attribute(node, "transB");
    if (trans_b && trans_b->i() != 0)
      take(weight, node.input(1), node);
    else
      tensors_.push_back({weight.name, transposed(constant(node.input(1), weight, node), in,
                                                  out, weight, node)});
    const bool has_c = node.input_size() >= 3 && !node.input(2).empty();
    if (has_c != (bias != nullptr))
      mismatch(node, weight, has_c ? "a bias, which the network's Linear lacks"
                                   : "no bias, which the network's Linear has");
    if (bias) tensors_.push_back({bias->name, tensor(node.input(2), Shape{out}, *bias, node)});
    return with_width(value(node.output(0)), out);
  }

  // [N, C, H, W] -> [N, H*W, C]: a Reshape to three dimensions, then Transpose (0, 2, 1).
  GraphValue tokens(GraphValue x) override {
    const onnx::NodeProto* reshape = find_consumer(x, {"Reshape"});
    if (reshape == nullptr) missing(x, "Reshape (to tokens)", std::nullopt);
    check_reshape(*reshape, {std::nullopt, std::nullopt, std::nullopt}, "[N, C, H*W]");
    return transposed(value(reshape->output(0)), {0, 2, 1}, "the tokens");
  }

  GraphValue add_parameter(GraphValue x, const NamedTensor& p) override {
    no_conv_bias(x, p);
    std::string constant_input;
    const onnx::NodeProto* add = find_with_constant(x, "Add", constant_input);
    if (add == nullptr) missing(x, "Add of a constant", p);
    last_tensor_ = p.name;
    take(p, constant_input, *add);
    return value(add->output(0));
  }

  // torch.onnx's LayerNorm before opset 17: ReduceMean(-1), Sub, Pow 2, ReduceMean(-1),
  // Add eps, Sqrt, Div, Mul scale, Add shift.
  GraphValue layer_norm(GraphValue x, const NamedTensor& scale, const NamedTensor& shift,
                        double eps) override {
    const onnx::NodeProto& mean = consumer(x, {"ReduceMean"}, scale);
    check_last_axis(mean, scale);
    const onnx::NodeProto* sub = find_consumer(x, {"Sub"});
    if (sub == nullptr || sub->input_size() != 2 ||
        resolve(sub->input(1)) != resolve(mean.output(0)))
      missing(x, "Sub of its ReduceMean", scale);
    const GraphValue centred = value(sub->output(0));
    const GraphValue squares = with_scalar(centred, "Pow", 2.0, scale);
    const onnx::NodeProto* variance = find_consumer(squares, {"ReduceMean"});
    if (variance == nullptr) missing(squares, "ReduceMean", scale);
    check_last_axis(*variance, scale);
    const GraphValue with_eps = with_scalar(value(variance->output(0)), "Add", eps, scale);
    const onnx::NodeProto* sqrt = find_consumer(with_eps, {"Sqrt"});
    if (sqrt == nullptr) missing(with_eps, "Sqrt", scale);
    const onnx::NodeProto* div = find_consumer(centred, {"Div"});
    if (div == nullptr || div->input_size() != 2 ||
        resolve(div->input(1)) != resolve(sqrt->output(0)))
      missing(centred, "Div by its Sqrt", scale);
    std::string constant_input;
    const onnx::NodeProto* mul = find_with_constant(value(div->output(0)), "Mul", constant_input);
    if (mul == nullptr) missing(value(div->output(0)), "Mul by the scale", scale);
    take(scale, constant_input, *mul);
    const onnx::NodeProto* add = find_with_constant(value(mul->output(0)), "Add", constant_input);
    if (add == nullptr) missing(value(mul->output(0)), "Add of the shift", shift);
    take(shift, constant_input, *add);
    last_tensor_ = shift.name;
    return with_width(value(add->output(0)), scale.value.numel());
  }

  // Clip(0, 6): the bounds as inputs (opset 11) or as attributes (before).
  GraphValue relu6(GraphValue x) override {
    const onnx::NodeProto* clip = find_consumer(x, {"Clip"});
    if (clip == nullptr) missing(x, "Clip (ReLU6)", std::nullopt);
    const auto bound = [&](int input, const char* name) -> std::optional<double> {
      if (const onnx::AttributeProto* a = attribute(*clip, name)) return a->f();
      if (clip->input_size() <= input || clip->input(input).empty()) return std::nullopt;
      const auto it = constants_.find(resolve(clip->input(input)));
      return it == constants_.end() ? std::nullopt : float_scalar(*it->second);
    };
    const std::optional<double> low = bound(1, "min"), high = bound(2, "max");
    if (low != 0.0 || high != 6.0)
      fail(fmt::format("its Clip '{}' (after '{}') clips to [{}, {}]; the network's ReLU6 to "
                       "[0, 6]",
                       clip->name(), last_tensor_, low ? fmt::format("{}", *low) : "-inf",
                       high ? fmt::format("{}", *high) : "inf"));
    return with_width(value(clip->output(0)), width(x));
  }

  // vit.py's attention as torch.onnx traces it: Reshape [N, T, 3, heads, d] -> Transpose
  // (2, 0, 3, 1, 4) -> Gather 0, 1, 2 -> MatMul(q, Transpose(k, (0, 1, 3, 2))) -> Mul
  // 1/sqrt(d) -> Softmax(-1) -> MatMul(·, v) -> Transpose (0, 2, 1, 3) -> Reshape [N, T, c].
  GraphValue attention(GraphValue qkv, std::int64_t heads) override {
    const std::int64_t c = width(qkv) / 3, d = c / heads;
    const onnx::NodeProto* split = find_consumer(qkv, {"Reshape"});
    if (split == nullptr) missing(qkv, "Reshape (to heads)", std::nullopt);
    check_reshape(*split, {std::nullopt, std::nullopt, 3, heads, d},
                  fmt::format("[N, T, 3, {}, {}]", heads, d));
    const GraphValue parts =
        transposed(value(split->output(0)), {2, 0, 3, 1, 4}, "the attention's q, k and v");
    std::optional<GraphValue> q, k, v;
    for (const int i : consumers(parts)) {
      const onnx::NodeProto& node = graph_.node(i);
      if (matched_[i] || node.op_type() != "Gather" || node.input_size() != 2 ||
          resolve(node.input(0)) != name(parts))
        continue;
      const onnx::AttributeProto* axis = attribute(node, "axis");
      const auto it = constants_.find(resolve(node.input(1)));
      const std::optional<std::vector<std::int64_t>> index =
          it == constants_.end() ? std::nullopt : integers(*it->second);
      if ((axis && axis->i() != 0) || !index || index->size() != 1 || it->second->dims_size())
        fail(fmt::format("its Gather '{}' on '{}' is no pick of q, k or v (axis 0, one index)",
                         node.name(), name(parts)));
      std::optional<GraphValue>* part = index->front() == 0   ? &q
                                        : index->front() == 1 ? &k
                                        : index->front() == 2 ? &v
                                                              : nullptr;
      if (part == nullptr || part->has_value())
        fail(fmt::format("its Gather '{}' on '{}' picks index {}, where the network's q, k and "
                         "v are 0, 1 and 2, once each",
                         node.name(), name(parts), index->front()));
      matched_[i] = true;
      *part = value(node.output(0));
    }
    if (!q || !k || !v) missing(parts, "Gather of each of q, k and v", std::nullopt);
    const GraphValue k_t = transposed(*k, {0, 1, 3, 2}, "the keys");
    const GraphValue scores = product(*q, k_t, "q kᵀ");
    const GraphValue scaled = with_scalar(scores, "Mul", 1.0 / std::sqrt(static_cast<double>(d)),
                                          std::nullopt);
    const onnx::NodeProto* softmax = find_consumer(scaled, {"Softmax"});
    if (softmax == nullptr) missing(scaled, "Softmax", std::nullopt);
    const onnx::AttributeProto* axis = attribute(*softmax, "axis");
    if (!axis || (axis->i() != -1 && axis->i() != 3))
      fail(fmt::format("its Softmax '{}' is over axis {}; the network's attention is over the "
                       "keys (the last axis)",
                       softmax->name(), axis ? axis->i() : 1));
    const GraphValue mixed = product(value(softmax->output(0)), *v, "the attention times v");
    const GraphValue heads_last = transposed(mixed, {0, 2, 1, 3}, "the heads");
    const onnx::NodeProto* joined = find_consumer(heads_last, {"Reshape"});
    if (joined == nullptr) missing(heads_last, "Reshape (heads joined)", std::nullopt);
    check_reshape(*joined, {std::nullopt, std::nullopt, c}, fmt::format("[N, T, {}]", c));
    return with_width(value(joined->output(0)), c);
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError(fmt::format("'{}' (an ONNX model) does not hold the network {}: {}",
                                 file_.string(), network_.describe(), why));
  }

  [[noreturn]] void mismatch(const onnx::NodeProto& node, const NamedTensor& tensor,
                             const std::string& what) const {
    fail(fmt::format("its {} '{}', where the network has '{}' {}, has {}", node.op_type(),
                     node.name(), tensor.name, shape_string(tensor.value.shape()), what));
  }

  [[noreturn]] void missing(GraphValue x, const std::string& op,
                            std::optional<NamedTensor> tensor) const {
    std::vector<std::string> found;
    for (const int i : consumers(x))
      found.push_back(fmt::format("{} '{}'", graph_.node(i).op_type(), graph_.node(i).name()));
    fail(fmt::format("where the network has {}, its graph has no {} on '{}' (that value goes "
                     "to {})",
                     tensor ? fmt::format("'{}' {}", tensor->name,
                                          shape_string(tensor->value.shape()))
                            : fmt::format("the layer after '{}'", last_tensor_),
                     op, name(x),
                     found.empty() ? "nothing else" : fmt::format("{}", fmt::join(found, ", "))));
  }

  // The value each alias stands for, once for all (each alias is followed once, so a chain of
  // N takes N steps); aliases that feed each other are a cycle no value ends, refused.
  void resolve_aliases(const std::unordered_map<std::string, int>& alias_node) {
    for (const auto& alias_and_input : alias_) {
      const std::string& start = alias_and_input.first;
      if (resolved_.count(start)) continue;
      std::vector<std::string> chain;  // aliases walked from start, not yet resolved
      std::unordered_map<std::string, std::size_t> on_chain;
      std::string v = start;
      while (alias_.count(v) && !resolved_.count(v)) {
        if (const auto seen = on_chain.find(v); seen != on_chain.end()) {
          std::vector<std::string> nodes;
          for (std::size_t k = seen->second; k < chain.size(); ++k) {
            const onnx::NodeProto& node = graph_.node(alias_node.at(chain[k]));
            nodes.push_back(fmt::format("{} '{}'", node.op_type(), node.name()));
            if (nodes.size() == 8 && chain.size() - k > 1) {
              nodes.push_back(fmt::format("and {} more", chain.size() - k - 1));
              break;
            }
          }
          fail(fmt::format("its nodes {} feed each other in a cycle: no value comes out of them",
                           fmt::join(nodes, ", ")));
        }
        on_chain.emplace(v, chain.size());
        chain.push_back(v);
        v = alias_.at(v);
      }
      const std::string end = resolved_.count(v) ? resolved_.at(v) : v;
      for (const std::string& alias : chain) resolved_[alias] = end;
    }
  }

  // The values that hold shapes, not data: constants, Shape's outputs and what nodes compute
  // from those alone. ONNX lists nodes in topological order, so one pass finds them.
  void find_shape_values() {
    for (const auto& [v, tensor] : constants_) shape_values_.insert(v);
    for (const onnx::NodeProto& node : graph_.node())
      if (node.op_type() == "Shape" || computes_shapes(node))
        for (const std::string& output : node.output()) shape_values_.insert(output);
  }

  // Whether the node computes from constants and shapes alone (Constant, Shape: from none).
  bool computes_shapes(const onnx::NodeProto& node) const {
    if (node.op_type() == "Shape" || node.op_type() == "Constant") return true;
    for (const std::string& input : node.input())
      if (!input.empty() && !shape_values_.count(resolve(input))) return false;
    return node.input_size() > 0;
  }

  std::string resolve(const std::string& v) const {
    const auto it = resolved_.find(v);
    return it == resolved_.end() ? v : it->second;
  }

  GraphValue value(const std::string& onnx_name) {
    values_.push_back(resolve(onnx_name));
    return GraphValue{static_cast<std::int64_t>(values_.size()) - 1};
  }
  const std::string& name(GraphValue v) const { return values_.at(static_cast<std::size_t>(v.id)); }

  std::vector<int> consumers(GraphValue x) const {
    const auto it = consumers_.find(name(x));
    return it == consumers_.end() ? std::vector<int>{} : it->second;
  }

  // The one unmatched node of these kinds that takes x as its data input (marked matched).
  const onnx::NodeProto* find_consumer(GraphValue x, std::initializer_list<const char*> ops) {
    std::optional<int> found;
    for (const int i : consumers(x)) {
      const onnx::NodeProto& node = graph_.node(i);
      if (matched_[i] || node.input_size() == 0 || resolve(node.input(0)) != name(x)) continue;
      for (const char* op : ops)
        if (node.op_type() == op) {
          if (found)
            fail(fmt::format("its graph has two {} nodes on '{}' where the network has one",
                             op, name(x)));
          found = i;
        }
    }
    if (!found) return nullptr;
    matched_[*found] = true;
    return &graph_.node(*found);
  }

  const onnx::NodeProto& consumer(GraphValue x, std::initializer_list<const char*> ops,
                                  const NamedTensor& tensor) {
    no_conv_bias(x, tensor);
    const onnx::NodeProto* node = find_consumer(x, ops);
    if (node == nullptr) missing(x, fmt::format("{}", fmt::join(ops, " or ")), tensor);
    last_tensor_ = tensor.name;
    return *node;
  }

  // The BatchNormalization on x; for x [N, C] it may run on [N, C, 1] between an Unsqueeze
  // and a Squeeze of axis 2 (as older torch.onnx and pfc export write a BatchNorm1d).
  // `output` gets the value the norm ends in.
  const onnx::NodeProto* find_batch_norm(GraphValue x, std::string& output) {
    if (const onnx::NodeProto* node = find_consumer(x, {"BatchNormalization"})) {
      output = node->output(0);
      return node;
    }
    const onnx::NodeProto* unsqueeze = find_consumer(x, {"Unsqueeze"});
    if (unsqueeze == nullptr) return nullptr;
    if (!unit_axis(*unsqueeze))
      fail(fmt::format("its Unsqueeze '{}' on '{}' adds another axis than 2", unsqueeze->name(),
                       name(x)));
    const GraphValue widened = value(unsqueeze->output(0));
    const onnx::NodeProto* node = find_consumer(widened, {"BatchNormalization"});
    const onnx::NodeProto* squeeze =
        node ? find_consumer(value(node->output(0)), {"Squeeze"}) : nullptr;
    if (squeeze == nullptr || !unit_axis(*squeeze))
      fail(fmt::format("its Unsqueeze '{}' on '{}' is not followed by a BatchNormalization and "
                       "a Squeeze of axis 2",
                       unsqueeze->name(), name(x)));
    output = squeeze->output(0);
    return node;
  }

  // Whether an Unsqueeze or Squeeze names axis 2 (-1 of three): as an attribute (opset 11)
  // or a constant input (opset 13).
  bool unit_axis(const onnx::NodeProto& node) const {
    std::vector<std::int64_t> axes;
    if (const onnx::AttributeProto* a = attribute(node, "axes")) {
      axes.assign(a->ints().begin(), a->ints().end());
    } else if (node.input_size() == 2) {
      const auto it = constants_.find(resolve(node.input(1)));
      if (it == constants_.end() || it->second->data_type() != onnx::TensorProto::INT64)
        return false;
      const onnx::TensorProto& t = *it->second;
      if (!t.raw_data().empty() && t.raw_data().size() == 8) {
        axes.resize(1);
        std::memcpy(axes.data(), t.raw_data().data(), 8);
      } else {
        axes.assign(t.int64_data().begin(), t.int64_data().end());
      }
    }
    return axes == std::vector<std::int64_t>{2} || axes == std::vector<std::int64_t>{-1};
  }

  // The unmatched `op` node on x and a constant, in either order (marked matched); the
  // constant's input name goes to `constant_input`.
  const onnx::NodeProto* find_with_constant(GraphValue x, const char* op,
                                            std::string& constant_input) {
    for (const int i : consumers(x)) {
      const onnx::NodeProto& node = graph_.node(i);
      if (matched_[i] || node.op_type() != op || node.input_size() != 2) continue;
      const bool first = resolve(node.input(0)) == name(x);
      if (!first && resolve(node.input(1)) != name(x)) continue;
      const std::string& other = node.input(first ? 1 : 0);
      if (!constants_.count(resolve(other))) continue;
      matched_[i] = true;
      constant_input = other;
      return &node;
    }
    return nullptr;
  }

  // The `op` node on x and the scalar constant `expected` (eps, a scale, Pow's 2).
  GraphValue with_scalar(GraphValue x, const char* op, double expected,
                         const std::optional<NamedTensor>& tensor) {
    std::string constant_input;
    const onnx::NodeProto* node = find_with_constant(x, op, constant_input);
    if (node == nullptr) missing(x, fmt::format("{} by {}", op, expected), tensor);
    const std::optional<double> got = float_scalar(*constants_.at(resolve(constant_input)));
    if (!got || !close_to(*got, expected))
      fail(fmt::format("its {} '{}' (after '{}') is by {}, where the network's is by {}", op,
                       node->name(), last_tensor_, got ? fmt::format("{}", *got) : "a non-scalar",
                       expected));
    return value(node->output(0));
  }

  // The Transpose of x by `perm`.
  GraphValue transposed(GraphValue x, const std::vector<std::int64_t>& perm, const char* what) {
    const onnx::NodeProto* node = find_consumer(x, {"Transpose"});
    if (node == nullptr) missing(x, fmt::format("Transpose of {}", what), std::nullopt);
    const onnx::AttributeProto* a = attribute(*node, "perm");
    const std::vector<std::int64_t> got =
        a ? std::vector<std::int64_t>(a->ints().begin(), a->ints().end())
          : std::vector<std::int64_t>{};
    if (got != perm)
      fail(fmt::format("its Transpose '{}' of {} (after '{}') permutes ({}); the network's "
                       "({})",
                       node->name(), what, last_tensor_, fmt::join(got, ", "),
                       fmt::join(perm, ", ")));
    return value(node->output(0));
  }

  // The MatMul of a and b, in that order.
  GraphValue product(GraphValue a, GraphValue b, const char* what) {
    for (const int i : consumers(a)) {
      const onnx::NodeProto& node = graph_.node(i);
      if (matched_[i] || node.op_type() != "MatMul" || node.input_size() != 2 ||
          resolve(node.input(0)) != name(a) || resolve(node.input(1)) != name(b))
        continue;
      matched_[i] = true;
      return value(node.output(0));
    }
    fail(fmt::format("where the network computes {} (after '{}'), its graph has no MatMul of "
                     "'{}' and '{}'",
                     what, last_tensor_, name(a), name(b)));
  }

  // A ReduceMean over the last axis of tokens [N, T, C], keeping it.
  void check_last_axis(const onnx::NodeProto& node, const NamedTensor& tensor) {
    const onnx::AttributeProto* axes = attribute(node, "axes");
    const std::vector<std::int64_t> got =
        axes ? std::vector<std::int64_t>(axes->ints().begin(), axes->ints().end())
             : std::vector<std::int64_t>{};
    if (got != std::vector<std::int64_t>{-1} && got != std::vector<std::int64_t>{2})
      mismatch(node, tensor,
               fmt::format("axes [{}] (the network: the last)", fmt::join(got, ", ")));
    check_attribute(node, "keepdims", {1}, tensor);
  }

  // What a Reshape's shape input holds, entry by entry (nullopt: computed at run time), as far
  // as it can be told without running the graph: a constant, or a Concat of constants and of
  // Unsqueezed scalars (the sizes torch.onnx reads off a dynamic batch). Nullopt when not even
  // its length can be told.
  std::optional<std::vector<std::optional<std::int64_t>>> reshape_target(
      const std::string& input) const {
    if (auto piece = shape_piece(input)) return piece;
    const auto p = producer_.find(resolve(input));
    if (p == producer_.end() || graph_.node(p->second).op_type() != "Concat") return std::nullopt;
    std::vector<std::optional<std::int64_t>> target;
    for (const std::string& input_piece : graph_.node(p->second).input()) {
      const auto piece = shape_piece(input_piece);
      if (!piece) return std::nullopt;
      target.insert(target.end(), piece->begin(), piece->end());
    }
    return target;
  }

  // A constant's entries, or one unknown entry for an Unsqueezed scalar.
  std::optional<std::vector<std::optional<std::int64_t>>> shape_piece(
      const std::string& input) const {
    const std::string v = resolve(input);
    if (const auto c = constants_.find(v); c != constants_.end()) {
      const std::optional<std::vector<std::int64_t>> ints = integers(*c->second);
      if (!ints) return std::nullopt;
      return std::vector<std::optional<std::int64_t>>(ints->begin(), ints->end());
    }
    const auto p = producer_.find(v);
    if (p != producer_.end() && graph_.node(p->second).op_type() == "Unsqueeze")
      return std::vector<std::optional<std::int64_t>>{std::nullopt};
    return std::nullopt;
  }

  // The Reshape must go to `expected` (nullopt: any size), as far as its target can be told;
  // -1 (the size the others leave) stands for any.
  void check_reshape(const onnx::NodeProto& node,
                     const std::vector<std::optional<std::int64_t>>& expected,
                     const std::string& what) {
    if (node.input_size() != 2) fail(fmt::format("its Reshape '{}' has no shape", node.name()));
    const auto target = reshape_target(node.input(1));
    if (!target) return;
    bool fits = target->size() == expected.size();
    for (std::size_t i = 0; fits && i < expected.size(); ++i)
      fits = !expected[i] || !(*target)[i] || *(*target)[i] == -1 || (*target)[i] == expected[i];
    if (!fits) {
      std::vector<std::string> entries;
      for (const auto& e : *target) entries.push_back(e ? std::to_string(*e) : "?");
      fail(fmt::format("its Reshape '{}' (after '{}') goes to [{}], where the network's goes "
                       "to {}",
                       node.name(), last_tensor_, fmt::join(entries, ", "), what));
    }
  }

  // The width (last dimension) of a token value, as the layer that made it told.
  GraphValue with_width(GraphValue x, std::int64_t width) {
    widths_[x.id] = width;
    return x;
  }
  std::int64_t width(GraphValue x) const {
    const auto it = widths_.find(x.id);
    PFC_CHECK(it != widths_.end(), "ONNX import: the width of '{}' is not known", name(x));
    return it->second;
  }

  std::optional<Tensor> take_conv_bias(GraphValue x) {
    const auto it = conv_bias_.find(x.id);
    if (it == conv_bias_.end()) return std::nullopt;
    Tensor bias = it->second;
    conv_bias_.erase(it);
    return bias;
  }

  // Only a batch norm may follow a convolution that has a bias (its folded form).
  void no_conv_bias(GraphValue x, const NamedTensor& tensor) const {
    if (conv_bias_.count(x.id))
      fail(fmt::format("its Conv producing '{}' has a bias, but the network applies '{}' next, "
                       "not a batch norm",
                       name(x), tensor.name));
  }

  static const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const char* name) {
    for (const onnx::AttributeProto& a : node.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }

  // An absent attribute has ONNX's default, which the network's defaults are.
  void check_attribute(const onnx::NodeProto& node, const char* name,
                       const std::vector<std::int64_t>& expected, const NamedTensor& tensor) {
    const onnx::AttributeProto* a = attribute(node, name);
    if (a == nullptr) return;
    std::vector<std::int64_t> got(a->ints().begin(), a->ints().end());
    if (a->type() == onnx::AttributeProto::INT) got = {a->i()};
    if (got != expected)
      mismatch(node, tensor, fmt::format("{} [{}] (the network: [{}])", name,
                                         fmt::join(got, ", "), fmt::join(expected, ", ")));
  }

  const onnx::TensorProto& constant(const std::string& input, const NamedTensor& tensor,
                                    const onnx::NodeProto& node) const {
    const auto it = constants_.find(resolve(input));
    if (it == constants_.end())
      mismatch(node, tensor, fmt::format("'{}' as its weight, which is not a constant", input));
    return *it->second;
  }

  // The constant `input` of `node` as `shape`, for the network's `tensor`.
  Tensor tensor(const std::string& input, const Shape& shape, const NamedTensor& tensor,
                const onnx::NodeProto& node) const {
    const onnx::TensorProto& t = constant(input, tensor, node);
    if (Shape(t.dims().begin(), t.dims().end()) != shape)
      mismatch(node, tensor, fmt::format("'{}' {} (the network: {})", input, shape_of(t),
                                         shape_string(shape)));
    return convert(t, shape, tensor);
  }

  void take(const NamedTensor& tensor, const std::string& input, const onnx::NodeProto& node) {
    tensors_.push_back({tensor.name, this->tensor(input, tensor.value.shape(), tensor, node)});
  }

  // t [in, out] as [out, in].
  Tensor transposed(const onnx::TensorProto& t, std::int64_t in, std::int64_t out,
                    const NamedTensor& tensor, const onnx::NodeProto& node) const {
    if (Shape(t.dims().begin(), t.dims().end()) != Shape{in, out})
      mismatch(node, tensor, fmt::format("'{}' {} (the network: [{}, {}] transposed)", t.name(),
                                         shape_of(t), in, out));
    const Tensor given = convert(t, {in, out}, tensor);
    Tensor result = Tensor::host({out, in}, DType::f32);
    for (std::int64_t i = 0; i < in; ++i)
      for (std::int64_t o = 0; o < out; ++o)
        result.data<float>()[o * in + i] = given.data<float>()[i * out + o];
    return result;
  }

  // The values of a float or float16 constant, f32, as `shape` (the same element count).
  Tensor convert(const onnx::TensorProto& t, const Shape& shape, const NamedTensor& tensor) const {
    const std::string where = fmt::format("the constant '{}' for '{}'", t.name(), tensor.name);
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      fail(fmt::format("{} lies in an external file; pfc reads models that hold their weights",
                       where));
    const std::int64_t n = shape_numel(shape);
    Tensor out = Tensor::host(shape, DType::f32);
    float* v = out.data<float>();
    const std::string& raw = t.raw_data();
    const auto count = [&](std::size_t have) {
      if (have != static_cast<std::size_t>(n))
        fail(fmt::format("{} holds {} values where {} needs {}", where, have,
                         shape_string(shape), n));
    };
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT:
        if (!raw.empty()) {
          count(raw.size() / 4);
          if (raw.size() % 4) count(raw.size());
          std::memcpy(v, raw.data(), raw.size());  // little-endian, as the hosts pfc runs on
        } else {
          count(static_cast<std::size_t>(t.float_data_size()));
          std::copy(t.float_data().begin(), t.float_data().end(), v);
        }
        break;
      case onnx::TensorProto::FLOAT16:
        if (!raw.empty()) {
          count(raw.size() / 2);
          if (raw.size() % 2) count(raw.size());
          for (std::int64_t i = 0; i < n; ++i) {
            std::uint16_t bits;
            std::memcpy(&bits, raw.data() + 2 * i, 2);
            v[i] = Half::to_float(bits);
          }
        } else {
          // ONNX keeps float16 values one per int32_data element, in the low 16 bits.
          count(static_cast<std::size_t>(t.int32_data_size()));
          for (std::int64_t i = 0; i < n; ++i)
            v[i] = Half::to_float(static_cast<std::uint16_t>(t.int32_data(static_cast<int>(i))));
        }
        break;
      default:
        fail(fmt::format("{} has ONNX element type {}; pfc reads float (1) and float16 (10)",
                         where, t.data_type()));
    }
    return out;
  }

  static Tensor filled(std::int64_t n, double value) {
    Tensor t = Tensor::host({n}, DType::f32);
    std::fill(t.data<float>(), t.data<float>() + n, static_cast<float>(value));
    return t;
  }

  const onnx::GraphProto& graph_;
  std::filesystem::path file_;
  const Backbone& network_;
  std::vector<bool> matched_;
  std::map<std::string, const onnx::TensorProto*> constants_;  // initializers, Constant nodes
  std::unordered_map<std::string, std::string> alias_;         // Identity / Dropout outputs
  std::unordered_map<std::string, std::string> resolved_;      // alias -> the value it is
  std::map<std::string, std::vector<int>> consumers_;          // value -> nodes taking it
  std::unordered_map<std::string, int> producer_;              // value -> the node making it
  std::set<std::string> shape_values_;  // values that hold shapes (find_shape_values)
  std::map<std::int64_t, std::int64_t> widths_;  // GraphValue id -> its last dimension
  std::vector<std::string> values_;                            // GraphValue id -> value
  std::map<std::int64_t, Tensor> conv_bias_;  // a Conv's bias, until its batch norm takes it
  std::vector<NamedTensor> tensors_;
  std::int64_t folded_ = 0;
  std::string last_tensor_ = "the images";
};

onnx::ModelProto read_model(const std::filesystem::path& file, const InputFileLimit& limit) {
  const InputFile in = InputFile::open_or_refuse(file, "an ONNX model", limit);
  onnx::ModelProto model;
  if (!model.ParseFromFileDescriptor(in.fd()) || !model.has_graph() ||
      model.graph().node_size() == 0)
    throw UsageError(fmt::format("'{}' is not an ONNX model (protobuf ModelProto with a graph), "
                                 "nor a PyTorch state_dict (a zip archive)",
                                 file.string()));
  return model;
}

}  // namespace

OnnxBackbone read_onnx_backbone(const std::filesystem::path& file, const Backbone& network,
                                const InputFileLimit& limit) {
  const onnx::ModelProto model = read_model(file, limit);
  GraphMatcher matcher(model.graph(), file, network);
  const GraphValue images = matcher.input();
  OnnxBackbone backbone = matcher.finish(network.trace(matcher, images));
  // A parameter inference never reads (the ViT's mask_token) has no trace in the graph.
  std::set<std::string> read;
  for (const NamedTensor& t : backbone.tensors) read.insert(t.name);
  for (const Parameter* p : network.parameters()) {
    if (read.count(p->name)) continue;
    Tensor zeros = Tensor::host(p->torch_shape, DType::f32);
    std::fill(zeros.data<float>(), zeros.data<float>() + zeros.numel(), 0.0f);
    backbone.tensors.push_back({p->name, std::move(zeros)});
    backbone.untraced.push_back(p->name);
  }
  return backbone;
}

}  // namespace pfc
