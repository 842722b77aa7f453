#include "export/onnx_graph_writer.h"

#include <cmath>

namespace pfc {

namespace {

void set_shape(onnx::ValueInfoProto& info, const Shape& shape) {
  auto* type = info.mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  auto* dims = type->mutable_shape();
  for (const std::int64_t d : shape) {
    // torch2onnx.py names the batch dimension "None"; insightface's tools expect it so.
    if (d < 0) {
      dims->add_dim()->set_dim_param("None");
    } else {
      dims->add_dim()->set_dim_value(d);
    }
  }
}

void add_ints(onnx::NodeProto& node, const std::string& name,
              const std::vector<std::int64_t>& values) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (const std::int64_t v : values) attribute->add_ints(v);
}

void add_int(onnx::NodeProto& node, const std::string& name, std::int64_t value) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void add_float(onnx::NodeProto& node, const std::string& name, double value) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::FLOAT);
  attribute->set_f(static_cast<float>(value));
}

// A weight the layer describes must have the element count its role asks for.
void check_numel(const NamedTensor& t, std::int64_t expected, const std::string& role) {
  PFC_CHECK(t.value.numel() == expected, "{}: {} has {} values, the layer needs {}", t.name, role,
            t.value.numel(), expected);
}

}  // namespace

std::string layer_name(const std::string& state_dict_name) {
  const auto dot = state_dict_name.rfind('.');
  return dot == std::string::npos ? state_dict_name : state_dict_name.substr(0, dot);
}

OnnxGraphWriter::OnnxGraphWriter(onnx::GraphProto& graph, const std::string& input_name,
                                 std::int64_t image_size)
    : graph_(graph) {
  const Shape shape{-1, 3, image_size, image_size};
  set_shape(*graph_.add_input(), shape);
  graph_.mutable_input(0)->set_name(input_name);
  new_value(unique_name(input_name), shape);
}

const OnnxGraphWriter::Value& OnnxGraphWriter::value(GraphValue v) const {
  PFC_CHECK(v.id >= 0 && static_cast<std::size_t>(v.id) < values_.size(),
            "ONNX export: value {} was not made by this graph", v.id);
  return values_[static_cast<std::size_t>(v.id)];
}

GraphValue OnnxGraphWriter::new_value(const std::string& name, Shape shape) {
  values_.push_back(Value{name, std::move(shape)});
  return GraphValue{static_cast<std::int64_t>(values_.size()) - 1};
}

std::string OnnxGraphWriter::unique_name(const std::string& base) {
  std::string name = base;
  while (!names_.insert(name).second) name = base + "_" + std::to_string(++op_counts_[base]);
  return name;
}

const std::string& OnnxGraphWriter::add_initializer(const NamedTensor& tensor,
                                                    const Shape& shape) {
  PFC_CHECK(tensor.value.dtype() == DType::f32, "{}: {} is not f32", tensor.name,
            tensor.value.describe());
  check_numel(tensor, shape_numel(shape), "the weight " + shape_string(shape));
  const float* v = tensor.value.data<float>();
  std::int64_t non_finite = 0;
  for (std::int64_t i = 0; i < tensor.value.numel(); ++i) non_finite += !std::isfinite(v[i]);
  if (non_finite > 0)
    throw UsageError(fmt::format("{} holds {} non-finite values (of {}): a diverged run; an ONNX "
                                 "model of it would compute nothing useful, so none is written",
                                 tensor.name, non_finite, tensor.value.numel()));
  onnx::TensorProto* init = graph_.add_initializer();
  init->set_name(unique_name(tensor.name));
  init->set_data_type(onnx::TensorProto::FLOAT);
  for (const std::int64_t d : shape) init->add_dims(d);
  init->set_raw_data(v, tensor.value.bytes());  // raw_data is little-endian, as our floats
  return init->name();
}

OnnxGraphWriter::Applied OnnxGraphWriter::apply(const std::string& op_type,
                                                const std::string& name,
                                                const std::vector<std::string>& inputs,
                                                Shape shape) {
  const std::string unique = unique_name(name);
  onnx::NodeProto& node = add_node(op_type, unique, inputs, unique);
  return {node, new_value(unique, std::move(shape))};
}

std::string OnnxGraphWriter::constant(const std::string& name, onnx::TensorProto tensor) {
  const std::string unique = unique_name(name);
  auto* attribute = add_node("Constant", unique, {}, unique).add_attribute();
  attribute->set_name("value");
  attribute->set_type(onnx::AttributeProto::TENSOR);
  *attribute->mutable_t() = std::move(tensor);
  return unique;
}

std::string OnnxGraphWriter::int64_constant(const std::string& name,
                                            const std::vector<std::int64_t>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<std::int64_t>(values.size()));
  for (const std::int64_t v : values) t.add_int64_data(v);
  return constant(name, std::move(t));
}

std::string OnnxGraphWriter::int64_scalar(const std::string& name, std::int64_t value) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_int64_data(value);
  return constant(name, std::move(t));
}

std::string OnnxGraphWriter::float_scalar(const std::string& name, double value) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_float_data(static_cast<float>(value));
  return constant(name, std::move(t));
}

GraphValue OnnxGraphWriter::reshape(GraphValue x, const std::string& name,
                                    const std::vector<std::int64_t>& target, Shape shape) {
  PFC_CHECK(shape_numel(shape) == shape_numel(value(x).shape),
            "ONNX export: Reshape of {} to {}", shape_string(value(x).shape),
            shape_string(shape));
  return apply("Reshape", name, {value(x).name, int64_constant(name + ".shape", target)},
               std::move(shape))
      .value;
}

GraphValue OnnxGraphWriter::transpose(GraphValue x, const std::string& name,
                                      const std::vector<std::int64_t>& perm) {
  const Shape in = value(x).shape;
  PFC_CHECK(perm.size() == in.size(), "ONNX export: Transpose of {} by {} axes",
            shape_string(in), perm.size());
  Shape shape;
  for (const std::int64_t axis : perm) shape.push_back(in.at(static_cast<std::size_t>(axis)));
  Applied t = apply("Transpose", name, {value(x).name}, std::move(shape));
  add_ints(t.node, "perm", perm);
  return t.value;
}

onnx::NodeProto& OnnxGraphWriter::add_node(const std::string& op_type, const std::string& name,
                                           const std::vector<std::string>& inputs,
                                           const std::string& output) {
  onnx::NodeProto* node = graph_.add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& input : inputs) node->add_input(input);
  node->add_output(output);
  return *node;
}

void OnnxGraphWriter::set_output(GraphValue v, const std::string& name) {
  const Value& out = value(v);
  PFC_CHECK(out.shape.size() == 2, "ONNX export: the output {} is not [N, features]",
            shape_string(out.shape));
  PFC_CHECK(names_.insert(name).second, "ONNX export: the output name '{}' is taken", name);
  // The producing node's output takes the graph output's name; nothing else reads it.
  for (auto& node : *graph_.mutable_node()) {
    for (auto& input : *node.mutable_input())
      PFC_CHECK(input != out.name, "ONNX export: the output {} is also read by {}", out.name,
                node.name());
    for (auto& output : *node.mutable_output())
      if (output == out.name) output = name;
  }
  set_shape(*graph_.add_output(), out.shape);
  graph_.mutable_output(0)->set_name(name);
  values_[static_cast<std::size_t>(v.id)].name = name;
}

GraphValue OnnxGraphWriter::convolution(GraphValue x, const NamedTensor& weight,
                                        const NamedTensor* bias, const ConvolutionSpec& spec) {
  const Shape in = value(x).shape;
  PFC_CHECK(in.size() == 4, "{}: the convolution's input {} is not [N, C, H, W]", weight.name,
            shape_string(in));
  const std::int64_t c = in[1];
  PFC_CHECK(spec.groups >= 1 && c % spec.groups == 0, "{}: {} channels in {} groups", weight.name,
            c, spec.groups);
  const std::int64_t per_group = spec.kernel * spec.kernel * (c / spec.groups);
  PFC_CHECK(weight.value.numel() % per_group == 0, "{}: {} values are no whole number of {}x{}x{} "
            "filters", weight.name, weight.value.numel(), c / spec.groups, spec.kernel,
            spec.kernel);
  const std::int64_t out_channels = weight.value.numel() / per_group;
  const auto out_size = [&](std::int64_t s) {
    return (s + 2 * spec.pad - spec.kernel) / spec.stride + 1;
  };
  std::vector<std::string> inputs{
      value(x).name,
      add_initializer(weight, {out_channels, c / spec.groups, spec.kernel, spec.kernel})};
  if (bias != nullptr) inputs.push_back(add_initializer(*bias, {out_channels}));
  const std::string name = unique_name(layer_name(weight.name));
  onnx::NodeProto& node = add_node("Conv", name, inputs, name);
  add_ints(node, "kernel_shape", {spec.kernel, spec.kernel});
  add_ints(node, "strides", {spec.stride, spec.stride});
  add_ints(node, "pads", {spec.pad, spec.pad, spec.pad, spec.pad});
  add_ints(node, "dilations", {1, 1});
  add_int(node, "group", spec.groups);
  return new_value(name, {-1, out_channels, out_size(in[2]), out_size(in[3])});
}

GraphValue OnnxGraphWriter::batch_norm(GraphValue x, const NamedTensor& scale,
                                       const NamedTensor& shift, const NamedTensor& running_mean,
                                       const NamedTensor& running_var, double eps) {
  const Shape in = value(x).shape;
  PFC_CHECK(in.size() == 2 || in.size() == 4, "{}: the batch-norm's input {} is neither [N, C] "
            "nor [N, C, H, W]", scale.name, shape_string(in));
  const Shape per_channel{in[1]};
  const std::string name = unique_name(layer_name(scale.name));
  const std::vector<std::string> weights{
      add_initializer(scale, per_channel), add_initializer(shift, per_channel),
      add_initializer(running_mean, per_channel), add_initializer(running_var, per_channel)};
  std::string input = value(x).name;
  const bool one_d = in.size() == 2;
  // BatchNormalization reads [N, C, D1...]; a BatchNorm1d on [N, C] runs on [N, C, 1], as
  // torch.onnx writes it, so no runtime has to guess whether dimension 1 is C.
  if (one_d) {
    const std::string unsqueezed = unique_name(name + ".unsqueeze");
    add_ints(add_node("Unsqueeze", unsqueezed, {input}, unsqueezed), "axes", {2});
    input = unsqueezed;
  }
  const std::string normalised = one_d ? unique_name(name + ".normalised") : name;
  std::vector<std::string> inputs{input};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  onnx::NodeProto& node = add_node("BatchNormalization", normalised, inputs, normalised);
  add_float(node, "epsilon", eps);
  add_float(node, "momentum", 0.9);  // ONNX's convention: 1 - PyTorch's 0.1; unused in inference
  if (one_d) add_ints(add_node("Squeeze", name, {normalised}, name), "axes", {2});
  return new_value(name, in);
}

GraphValue OnnxGraphWriter::prelu(GraphValue x, const NamedTensor& slope) {
  const Shape in = value(x).shape;
  // The slope broadcasts from the right: [C, 1, 1] against [N, C, H, W], [C] against [N, C].
  Shape slope_shape{in.at(1)};
  for (std::size_t d = 2; d < in.size(); ++d) slope_shape.push_back(1);
  const std::string& s = add_initializer(slope, slope_shape);
  const std::string name = unique_name(layer_name(slope.name));
  add_node("PRelu", name, {value(x).name, s}, name);
  return new_value(name, in);
}

GraphValue OnnxGraphWriter::add(GraphValue a, GraphValue b) {
  PFC_CHECK(value(a).shape == value(b).shape, "ONNX export: Add of {} and {}",
            shape_string(value(a).shape), shape_string(value(b).shape));
  const std::string name = unique_name(value(a).name + ".add");
  add_node("Add", name, {value(a).name, value(b).name}, name);
  return new_value(name, value(a).shape);
}

GraphValue OnnxGraphWriter::flatten(GraphValue x) {
  const Shape in = value(x).shape;
  PFC_CHECK(in.size() == 3 || in.size() == 4, "ONNX export: Flatten of {}", shape_string(in));
  std::int64_t features = 1;
  for (std::size_t d = 1; d < in.size(); ++d) features *= in[d];
  Applied flat = apply("Flatten", value(x).name + ".flatten", {value(x).name}, {-1, features});
  add_int(flat.node, "axis", 1);
  return flat.value;
}

GraphValue OnnxGraphWriter::linear(GraphValue x, const NamedTensor& weight,
                                   const NamedTensor* bias) {
  const Shape in = value(x).shape;
  if (in.size() == 3) return token_linear(x, weight, bias);
  PFC_CHECK(in.size() == 2, "{}: the linear layer's input {} is neither [N, features] nor "
            "[N, tokens, features]", weight.name, shape_string(in));
  PFC_CHECK(weight.value.numel() % in[1] == 0, "{}: {} values are no [out, {}] matrix",
            weight.name, weight.value.numel(), in[1]);
  const std::int64_t out = weight.value.numel() / in[1];
  const std::string name = unique_name(layer_name(weight.name));
  std::vector<std::string> inputs{value(x).name, add_initializer(weight, {out, in[1]})};
  if (bias != nullptr) inputs.push_back(add_initializer(*bias, {out}));
  onnx::NodeProto& node = add_node("Gemm", name, inputs, name);
  add_int(node, "transB", 1);
  return new_value(name, {-1, out});
}

GraphValue OnnxGraphWriter::token_linear(GraphValue x, const NamedTensor& weight,
                                         const NamedTensor* bias) {
  const Shape in = value(x).shape;
  const std::int64_t features = in.back();
  PFC_CHECK(weight.value.dtype() == DType::f32, "{}: {} is not f32", weight.name,
            weight.value.describe());
  PFC_CHECK(weight.value.numel() % features == 0, "{}: {} values are no [out, {}] matrix",
            weight.name, weight.value.numel(), features);
  const std::int64_t out = weight.value.numel() / features;
  // torch.onnx multiplies by the transposed weight, folded into a constant [in, out].
  Tensor transposed = Tensor::host({features, out}, DType::f32);
  const float* w = weight.value.data<float>();
  float* t = transposed.data<float>();
  for (std::int64_t o = 0; o < out; ++o)
    for (std::int64_t i = 0; i < features; ++i) t[i * out + o] = w[o * features + i];
  const std::string w_t = add_initializer({weight.name + ".T", transposed}, {features, out});
  const std::string layer = layer_name(weight.name);
  Shape shape = in;
  shape.back() = out;
  if (bias == nullptr) return apply("MatMul", layer, {value(x).name, w_t}, shape).value;
  const GraphValue product = apply("MatMul", layer + ".matmul", {value(x).name, w_t}, shape).value;
  return apply("Add", layer, {value(product).name, add_initializer(*bias, {out})}, shape).value;
}

GraphValue OnnxGraphWriter::tokens(GraphValue x) {
  const Shape in = value(x).shape;
  PFC_CHECK(in.size() == 4, "ONNX export: tokens of {}, which is not [N, C, H, W]",
            shape_string(in));
  const std::string name = value(x).name + ".tokens";
  const std::int64_t c = in[1], pixels = in[2] * in[3];
  const GraphValue flat = reshape(x, name + ".flatten", {0, c, pixels}, {-1, c, pixels});
  return transpose(flat, name, {0, 2, 1});
}

GraphValue OnnxGraphWriter::add_parameter(GraphValue x, const NamedTensor& p) {
  Shape shape = value(x).shape;
  shape[0] = 1;
  const std::string& initializer = add_initializer(p, shape);
  return apply("Add", p.name + ".add", {value(x).name, initializer}, value(x).shape).value;
}

GraphValue OnnxGraphWriter::layer_norm(GraphValue x, const NamedTensor& scale,
                                       const NamedTensor& shift, double eps) {
  const Shape in = value(x).shape;
  PFC_CHECK(in.size() >= 2, "{}: the LayerNorm's input {} has no features", scale.name,
            shape_string(in));
  const std::string layer = layer_name(scale.name);
  const std::string s = add_initializer(scale, {in.back()});
  const std::string b = add_initializer(shift, {in.back()});
  Shape reduced = in;
  reduced.back() = 1;
  const auto mean = [&](GraphValue v, const std::string& name) {
    Applied m = apply("ReduceMean", name, {value(v).name}, reduced);
    add_ints(m.node, "axes", {-1});  // keepdims: 1, ONNX's default
    return m.value;
  };
  const auto name = [&](GraphValue v) { return value(v).name; };
  const GraphValue centred =
      apply("Sub", layer + ".centred", {name(x), name(mean(x, layer + ".mean"))}, in).value;
  const GraphValue squares =
      apply("Pow", layer + ".squares", {name(centred), float_scalar(layer + ".two", 2.0)}, in)
          .value;
  const GraphValue variance =
      apply("Add", layer + ".variance_eps",
            {name(mean(squares, layer + ".variance")), float_scalar(layer + ".eps", eps)},
            reduced)
          .value;
  const GraphValue deviation = apply("Sqrt", layer + ".std", {name(variance)}, reduced).value;
  const GraphValue normalised =
      apply("Div", layer + ".normalised", {name(centred), name(deviation)}, in).value;
  const GraphValue scaled = apply("Mul", layer + ".scaled", {name(normalised), s}, in).value;
  return apply("Add", layer, {name(scaled), b}, in).value;
}

GraphValue OnnxGraphWriter::relu6(GraphValue x) {
  const std::string name = value(x).name + ".relu6";
  return apply("Clip", name,
               {value(x).name, float_scalar(name + ".min", 0.0), float_scalar(name + ".max", 6.0)},
               value(x).shape)
      .value;
}

GraphValue OnnxGraphWriter::attention(GraphValue qkv, std::int64_t heads) {
  const Shape in = value(qkv).shape;
  PFC_CHECK(heads >= 1 && in.size() == 3 && in[2] % (3 * heads) == 0,
            "ONNX export: attention of {} heads on {}, which is not [N, tokens, 3 x heads x d]",
            heads, shape_string(in));
  const std::int64_t t = in[1], c = in[2] / 3, d = c / heads;
  const std::string layer = layer_name(value(qkv).name);  // blocks.0.attn (.qkv)
  const auto name = [&](GraphValue v) { return value(v).name; };
  const GraphValue split =
      reshape(qkv, layer + ".split", {0, t, 3, heads, d}, {-1, t, 3, heads, d});
  const GraphValue parts = transpose(split, layer + ".parts", {2, 0, 3, 1, 4});
  const auto part = [&](std::int64_t index, const std::string& what) {
    Applied gather = apply("Gather", layer + "." + what,
                           {name(parts), int64_scalar(layer + "." + what + ".index", index)},
                           {-1, heads, t, d});
    add_int(gather.node, "axis", 0);
    return gather.value;
  };
  const GraphValue q = part(0, "q"), k = part(1, "k"), v = part(2, "v");
  const GraphValue k_t = transpose(k, layer + ".k_t", {0, 1, 3, 2});
  const Shape scores_shape{-1, heads, t, t};
  const GraphValue scores =
      apply("MatMul", layer + ".scores", {name(q), name(k_t)}, scores_shape).value;
  const GraphValue scaled =
      apply("Mul", layer + ".scaled",
            {name(scores), float_scalar(layer + ".scale", 1.0 / std::sqrt(static_cast<double>(d)))},
            scores_shape)
          .value;
  Applied softmax = apply("Softmax", layer + ".softmax", {name(scaled)}, scores_shape);
  add_int(softmax.node, "axis", -1);
  const GraphValue mixed =
      apply("MatMul", layer + ".mixed", {name(softmax.value), name(v)}, {-1, heads, t, d}).value;
  return reshape(transpose(mixed, layer + ".heads", {0, 2, 1, 3}), layer + ".joined",
                 {0, t, c}, {-1, t, c});
}

}  // namespace pfc
