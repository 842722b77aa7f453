#include "model/inference_network.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/error.h"
#include "model/attention_layout.h"
#include "model/backbone.h"

namespace pfc {

namespace {

enum class Op {
  convolution, batch_norm, prelu, add, flatten, linear,
  tokens, add_parameter, layer_norm, relu6, attention
};

// One layer application of the trace, its tensors read into f64 (every parameter arrives as
// f32 on the host, in PyTorch's layout).
struct Node {
  Node(Op kind, std::int64_t first, std::int64_t second = -1) : op(kind), a(first), b(second) {}
  Op op;
  std::int64_t a, b, out = -1;
  ConvolutionSpec spec;
  Shape weight_shape;
  std::vector<std::vector<double>> tensors;  // conv, linear: w (, bias); bn: scale, shift,
                                             // mean, var; prelu: slope; add_parameter: p;
                                             // layer_norm: scale, shift
  Shape parameter_shape;  // add_parameter: p's
  double eps = 0.0;
  std::int64_t heads = 0;
};

std::vector<double> values_of(const NamedTensor& t) {
  PFC_CHECK(t.value.dtype() == DType::f32 && t.value.device() == DeviceKind::cpu,
            "inference network: {} is {} {}, expected an f32 host tensor", t.name,
            t.value.describe(), dtype_name(t.value.dtype()));
  const float* p = t.value.data<float>();
  return std::vector<double>(p, p + t.value.numel());
}

// The trace, as it is told. Value 0 is the images.
class Recorder final : public InferenceGraph {
 public:
  std::vector<Node> nodes;
  std::int64_t next = 1;

  GraphValue convolution(GraphValue x, const NamedTensor& weight, const NamedTensor* bias,
                         const ConvolutionSpec& spec) override {
    Node n(Op::convolution, x.id);
    n.spec = spec;
    n.weight_shape = weight.value.shape();
    n.tensors = {values_of(weight)};
    if (bias != nullptr) n.tensors.push_back(values_of(*bias));
    return push(std::move(n));
  }
  GraphValue batch_norm(GraphValue x, const NamedTensor& scale, const NamedTensor& shift,
                        const NamedTensor& running_mean, const NamedTensor& running_var,
                        double eps) override {
    Node n(Op::batch_norm, x.id);
    n.tensors = {values_of(scale), values_of(shift), values_of(running_mean),
                 values_of(running_var)};
    n.eps = eps;
    return push(std::move(n));
  }
  GraphValue prelu(GraphValue x, const NamedTensor& slope) override {
    Node n(Op::prelu, x.id);
    n.tensors = {values_of(slope)};
    return push(std::move(n));
  }
  GraphValue add(GraphValue a, GraphValue b) override { return push(Node(Op::add, a.id, b.id)); }
  GraphValue flatten(GraphValue x) override { return push(Node(Op::flatten, x.id)); }
  GraphValue linear(GraphValue x, const NamedTensor& weight, const NamedTensor* bias) override {
    Node n(Op::linear, x.id);
    n.weight_shape = weight.value.shape();
    n.tensors = {values_of(weight)};
    if (bias != nullptr) n.tensors.push_back(values_of(*bias));
    return push(std::move(n));
  }
  GraphValue tokens(GraphValue x) override { return push(Node(Op::tokens, x.id)); }
  GraphValue add_parameter(GraphValue x, const NamedTensor& p) override {
    Node n(Op::add_parameter, x.id);
    n.parameter_shape = p.value.shape();
    n.tensors = {values_of(p)};
    return push(std::move(n));
  }
  GraphValue layer_norm(GraphValue x, const NamedTensor& scale, const NamedTensor& shift,
                        double eps) override {
    Node n(Op::layer_norm, x.id);
    n.tensors = {values_of(scale), values_of(shift)};
    n.eps = eps;
    return push(std::move(n));
  }
  GraphValue relu6(GraphValue x) override { return push(Node(Op::relu6, x.id)); }
  GraphValue attention(GraphValue qkv, std::int64_t heads) override {
    Node n(Op::attention, qkv.id);
    n.heads = heads;
    return push(std::move(n));
  }

 private:
  GraphValue push(Node n) {
    n.out = next++;
    nodes.push_back(std::move(n));
    return {nodes.back().out};
  }
};

// y = x * scale + shift per channel, as PyTorch's eval-mode batch-norm computes it.
struct ChannelAffine {
  std::vector<double> scale, shift;
};

ChannelAffine batch_norm_affine(const Node& bn) {
  const auto& [gamma, beta, mean, var] =
      std::tie(bn.tensors[0], bn.tensors[1], bn.tensors[2], bn.tensors[3]);
  ChannelAffine f{std::vector<double>(gamma.size()), std::vector<double>(gamma.size())};
  for (std::size_t c = 0; c < gamma.size(); ++c) {
    f.scale[c] = gamma[c] / std::sqrt(var[c] + bn.eps);
    f.shift[c] = beta[c] - mean[c] * f.scale[c];
  }
  return f;
}

}  // namespace

struct InferenceNetwork::Step {
  enum class Kind {
    convolution, batch_norm, prelu, add, layer_norm, relu6, attention, add_parameter
  } kind = Kind::convolution;
  std::int64_t input = -1, output = -1;
  std::int64_t other = -1;  // add: the second operand; convolution: the residual (-1: none)
  std::int64_t order = 0;   // the trace position it runs at
  // convolution
  std::int64_t out_channels = 0, kernel = 1, stride = 1, pad = 0, groups = 1;
  bool whole_map = false;  // a Linear: the kernel covers the input's whole map
  std::vector<double> w, b, slope;  // OHWI filter, bias, PReLU slope (empty: none)
  bool relu6 = false;               // clamped to [0, 6] after the PReLU
  // batch_norm: gamma, beta, running mean and variance; layer_norm: gamma, beta; and eps.
  // add_parameter: the parameter in pfc's layout.
  std::vector<std::vector<double>> statistics;
  double eps = 0.0;
  std::int64_t heads = 0;  // attention

  // On the backend, once prepared.
  Tensor weight, bias, prelu_slope, gamma, beta, mean, var, parameter;
};

namespace {

// The f32 attention scores an inference attention step holds at once: a few MiB, which stay in
// a CPU's caches.
constexpr std::int64_t kAttentionScoreBytes = std::int64_t{4} << 20;

// The samples a batch goes through the network at a time. A pass's activations then stay in
// the caches from one layer to the next (an r50 image's largest map is 3.2 MB in f32, vit_t's
// 0.6 MB), where a whole batch's stream through memory at every layer, and the kernels run as
// fast at a few samples as at many. Measured with pfc embed on 2 cores of a Zen 5 (32 MB L3),
// 2 ranks x 1 thread, images/s at 1, 2, 4, 8, 16 and 64 samples a pass: r50 f32 36.5, -,
// 40.6, 41.1, 40.2, 32.8; vit_t f32 124.8, 131.2, 143.4, 130.7, 126.5, 125.4.
constexpr std::int64_t kSamplesPerPass = 4;

// The values a recorded node reads, before flatten aliases are resolved.
std::vector<std::int64_t> operands(const Node& n) {
  if (n.op == Op::add) return {n.a, n.b};
  return {n.a};
}

}  // namespace

InferenceNetwork::InferenceNetwork(const Backbone& backbone, InferencePrecision precision)
    : backend_(backbone.backend()), embedding_size_(backbone.embedding_size()) {
  Recorder recorder;
  const GraphValue result = backbone.trace(recorder, GraphValue{0});
  values_ = recorder.next;
  std::vector<std::int64_t> uses(values_, 0), alias(values_), channels(values_, 0);
  // By the value as told (before aliases): it is a flatten's output; its elements are in token
  // order ([n, t, c], which is pfc's [n, h, w, c] order too) rather than PyTorch's [n, c, h, w].
  std::vector<bool> flattened(values_, false), token_order(values_, false);
  for (std::int64_t v = 0; v < values_; ++v) alias[v] = v;
  for (const Node& n : recorder.nodes)
    for (std::int64_t v : operands(n)) ++uses[v];
  ++uses[result.id];
  channels[0] = 3;
  // producer[v]: the convolution step whose output v is, still open to an epilogue.
  std::map<std::int64_t, std::size_t> producer;
  auto open_convolution = [&](std::int64_t v) -> Step* {
    auto found = producer.find(v);
    if (found == producer.end() || uses[v] != 1) return nullptr;
    return &steps_[found->second];
  };
  auto standalone = [&](Step::Kind kind, const Node& n, std::int64_t order) -> Step& {
    Step s;
    s.kind = kind;
    s.input = alias[n.a];
    s.output = n.out;
    s.order = order;
    steps_.push_back(std::move(s));
    return steps_.back();
  };
  std::int64_t order = 0;
  for (const Node& n : recorder.nodes) {
    ++order;
    const std::int64_t x = alias[n.a];
    token_order[n.out] = token_order[n.a];
    switch (n.op) {
      case Op::flatten:
        alias[n.out] = x;
        channels[n.out] = channels[x];
        flattened[n.out] = true;
        break;
      case Op::tokens:
        // [n, h, w, c] already lists the tokens in PyTorch's flatten(2).transpose(1, 2) order.
        alias[n.out] = x;
        channels[n.out] = channels[x];
        token_order[n.out] = true;
        break;
      case Op::layer_norm: {
        Step& s = standalone(Step::Kind::layer_norm, n, order);
        s.statistics = n.tensors;
        s.eps = n.eps;
        channels[n.out] = channels[x];
        break;
      }
      case Op::relu6: {
        Step* conv = open_convolution(n.a);
        if (conv != nullptr && !conv->relu6 && conv->other < 0) {
          conv->relu6 = true;
          conv->output = n.out;
          producer[n.out] = static_cast<std::size_t>(conv - steps_.data());
        } else {
          standalone(Step::Kind::relu6, n, order);
        }
        channels[n.out] = channels[x];
        break;
      }
      case Op::attention:
        standalone(Step::Kind::attention, n, order).heads = n.heads;
        channels[n.out] = channels[x] / 3;
        break;
      case Op::add_parameter: {
        Step& s = standalone(Step::Kind::add_parameter, n, order);
        const Shape& p = n.parameter_shape;
        if (p.size() == 4 && !token_order[n.a]) {
          // [1, c, h, w] -> pfc's [h, w, c].
          const std::int64_t c = p[1], hw = p[2] * p[3];
          std::vector<double> hwc(n.tensors[0].size());
          for (std::int64_t ch = 0; ch < c; ++ch)
            for (std::int64_t q = 0; q < hw; ++q) hwc[q * c + ch] = n.tensors[0][ch * hw + q];
          s.statistics = {std::move(hwc)};
        } else {
          s.statistics = n.tensors;
        }
        channels[n.out] = channels[x];
        break;
      }
      case Op::convolution: {
        Step s;
        s.input = x;
        s.output = n.out;
        s.order = order;
        const std::int64_t out = n.weight_shape[0], in = n.weight_shape[1], k = n.spec.kernel;
        s.out_channels = out;
        s.kernel = k;
        s.stride = n.spec.stride;
        s.pad = n.spec.pad;
        s.groups = n.spec.groups;
        // PyTorch's [out, in / groups, k, k] -> pfc's [out, k, k, in / groups].
        s.w.resize(n.tensors[0].size());
        for (std::int64_t o = 0; o < out; ++o)
          for (std::int64_t i = 0; i < in; ++i)
            for (std::int64_t p = 0; p < k * k; ++p)
              s.w[(o * k * k + p) * in + i] = n.tensors[0][(o * in + i) * k * k + p];
        if (n.tensors.size() > 1) s.b = n.tensors[1];
        channels[n.out] = out;
        producer[n.out] = steps_.size();
        steps_.push_back(std::move(s));
        break;
      }
      case Op::linear: {
        // Over the channels of [n, c] or of tokens [n, t, c]: a 1x1 convolution. After a
        // flatten of [n, c, h, w] in PyTorch's order (index c*h*w + y*w + x), which pfc holds
        // as [n, h, w, c]: a convolution with an h x w kernel, its columns reordered to HWC;
        // flattened tokens are in that order already.
        const std::int64_t c = channels[x], out = n.weight_shape[0], in = n.weight_shape[1];
        PFC_CHECK(c > 0 && in % c == 0, "inference network: a Linear of {} inputs after {} "
                  "channels", in, c);
        const std::int64_t hw = in / c;
        const auto side = static_cast<std::int64_t>(std::llround(std::sqrt(double(hw))));
        PFC_CHECK(side * side == hw, "inference network: a Linear after a {}-pixel map, which "
                  "is not square", hw);
        Step s;
        s.input = x;
        s.output = n.out;
        s.order = order;
        s.out_channels = out;
        s.kernel = side;
        s.whole_map = hw > 1;
        PFC_CHECK(hw == 1 || flattened[n.a], "inference network: a Linear of {} inputs on {} "
                  "channels that are not flattened", in, c);
        if (token_order[n.a] || hw == 1) {
          s.w = n.tensors[0];
        } else {
          s.w.resize(n.tensors[0].size());
          for (std::int64_t o = 0; o < out; ++o)
            for (std::int64_t ch = 0; ch < c; ++ch)
              for (std::int64_t p = 0; p < hw; ++p)
                s.w[(o * hw + p) * c + ch] = n.tensors[0][o * in + ch * hw + p];
        }
        if (n.tensors.size() > 1) s.b = n.tensors[1];
        channels[n.out] = out;
        producer[n.out] = steps_.size();
        steps_.push_back(std::move(s));
        break;
      }
      case Op::batch_norm: {
        const ChannelAffine f = batch_norm_affine(n);
        Step* conv = open_convolution(n.a);
        if (conv != nullptr && conv->slope.empty() && !conv->relu6 && conv->other < 0) {
          // conv(x) * s + t = conv_{w * s}(x) + (b * s + t), per output channel.
          const std::int64_t per_output =
              static_cast<std::int64_t>(conv->w.size()) / conv->out_channels;
          if (conv->b.empty()) conv->b.assign(conv->out_channels, 0.0);
          for (std::int64_t o = 0; o < conv->out_channels; ++o) {
            for (std::int64_t j = 0; j < per_output; ++j) conv->w[o * per_output + j] *= f.scale[o];
            conv->b[o] = conv->b[o] * f.scale[o] + f.shift[o];
          }
          conv->output = n.out;
          producer[n.out] = static_cast<std::size_t>(conv - steps_.data());
        } else {
          Step s;
          s.kind = Step::Kind::batch_norm;
          s.input = x;
          s.output = n.out;
          s.order = order;
          s.statistics = n.tensors;
          s.eps = n.eps;
          steps_.push_back(std::move(s));
        }
        channels[n.out] = channels[x];
        break;
      }
      case Op::prelu: {
        Step* conv = open_convolution(n.a);
        if (conv != nullptr && conv->slope.empty() && !conv->relu6 && conv->other < 0) {
          conv->slope = n.tensors[0];
          conv->output = n.out;
          producer[n.out] = static_cast<std::size_t>(conv - steps_.data());
        } else {
          Step s;
          s.kind = Step::Kind::prelu;
          s.input = x;
          s.output = n.out;
          s.order = order;
          s.slope = n.tensors[0];
          steps_.push_back(std::move(s));
        }
        channels[n.out] = channels[x];
        break;
      }
      case Op::add: {
        const std::int64_t y = alias[n.b];
        Step* conv = nullptr;
        std::int64_t residual = -1;
        for (const auto& [candidate, rest] : {std::pair{n.a, y}, std::pair{n.b, x}}) {
          Step* c = open_convolution(candidate);
          if (c != nullptr && c->other < 0 && rest != c->input) {
            conv = c;
            residual = rest;
            break;
          }
        }
        if (conv != nullptr) {
          // Runs where the sum was told, once both operands exist.
          conv->other = residual;
          conv->output = n.out;
          conv->order = order;
          producer[n.out] = static_cast<std::size_t>(conv - steps_.data());
        } else {
          Step s;
          s.kind = Step::Kind::add;
          s.input = x;
          s.other = y;
          s.output = n.out;
          s.order = order;
          steps_.push_back(std::move(s));
        }
        channels[n.out] = channels[x];
        break;
      }
    }
  }
  input_ = 0;
  output_ = alias[result.id];
  std::stable_sort(steps_.begin(), steps_.end(),
                   [](const Step& l, const Step& r) { return l.order < r.order; });

  last_use_.assign(values_, -1);
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    last_use_[steps_[i].input] = static_cast<std::int64_t>(i);
    if (steps_[i].other >= 0) last_use_[steps_[i].other] = static_cast<std::int64_t>(i);
  }
  last_use_[output_] = static_cast<std::int64_t>(steps_.size());

  // The folded values, rounded once to the types they run in.
  Backend& be = backend_;
  auto upload = [&](const std::vector<double>& v, const Shape& shape, DType type) {
    if (v.empty()) return Tensor();
    Tensor host = Tensor::host(shape, DType::f32);
    std::transform(v.begin(), v.end(), host.data<float>(),
                   [](double d) { return static_cast<float>(d); });
    Tensor f32 = be.empty(shape, DType::f32, MemoryPurpose::weights);
    be.copy(host, f32);
    if (type == DType::f32) return f32;
    Tensor rounded = be.empty(shape, type, MemoryPurpose::weights);
    be.cast(f32, rounded);
    return rounded;
  };
  products_ = precision == InferencePrecision::bf16 ? DType::bf16 : DType::f32;
  // In bf16, a convolution or LayerNorm writes its output in bf16 when only bf16 products read
  // it (the next convolution, attention's): its readers would each round it to bf16
  // themselves. The same bits, half the bytes, and no pass to convert them (6 % of vit_t's
  // bf16 embedding at batch 1). A sum or anything else that reads it keeps it f32.
  types_.assign(values_, DType::f32);
  if (products_ == DType::bf16) {
    std::vector<bool> bf16_readers_only(values_, true);
    bf16_readers_only[output_] = false;
    for (const Step& s : steps_) {
      if (s.kind != Step::Kind::convolution && s.kind != Step::Kind::attention)
        bf16_readers_only[s.input] = false;
      if (s.other >= 0) bf16_readers_only[s.other] = false;
    }
    for (const Step& s : steps_)
      if (((s.kind == Step::Kind::convolution && s.other < 0) ||
           s.kind == Step::Kind::layer_norm) &&
          bf16_readers_only[s.output])
        types_[s.output] = DType::bf16;
  }
  for (Step& s : steps_) {
    switch (s.kind) {
      case Step::Kind::convolution: {
        const std::int64_t per_output = static_cast<std::int64_t>(s.w.size()) / s.out_channels;
        s.weight = upload(s.w, {s.out_channels, s.kernel, s.kernel, per_output / (s.kernel * s.kernel)},
                          products_);
        s.bias = upload(s.b, {s.out_channels}, DType::f32);
        s.prelu_slope = upload(s.slope, {s.out_channels}, DType::f32);
        break;
      }
      case Step::Kind::batch_norm: {
        const auto c = static_cast<std::int64_t>(s.statistics[0].size());
        s.gamma = upload(s.statistics[0], {c}, DType::f32);
        s.beta = upload(s.statistics[1], {c}, DType::f32);
        s.mean = upload(s.statistics[2], {c}, DType::f32);
        s.var = upload(s.statistics[3], {c}, DType::f32);
        break;
      }
      case Step::Kind::prelu:
        s.prelu_slope = upload(s.slope, {static_cast<std::int64_t>(s.slope.size())}, DType::f32);
        break;
      case Step::Kind::layer_norm: {
        const auto c = static_cast<std::int64_t>(s.statistics[0].size());
        s.gamma = upload(s.statistics[0], {c}, DType::f32);
        s.beta = upload(s.statistics[1], {c}, DType::f32);
        break;
      }
      case Step::Kind::add_parameter:
        s.parameter = upload(s.statistics[0],
                             {static_cast<std::int64_t>(s.statistics[0].size())}, DType::f32);
        break;
      case Step::Kind::add:
      case Step::Kind::relu6:
      case Step::Kind::attention:
        break;
    }
    s.w = s.b = s.slope = {};
    s.statistics.clear();
  }
}

InferenceNetwork::~InferenceNetwork() = default;

std::int64_t InferenceNetwork::convolutions() const {
  return std::count_if(steps_.begin(), steps_.end(),
                       [](const Step& s) { return s.kind == Step::Kind::convolution; });
}

std::int64_t InferenceNetwork::standalone_steps() const {
  return static_cast<std::int64_t>(steps_.size()) - convolutions();
}

std::int64_t InferenceNetwork::bf16_values() const {
  return std::count(types_.begin(), types_.end(), DType::bf16);
}

Tensor InferenceNetwork::forward(const Tensor& images) {
  PFC_CHECK(images.rank() == 4 && images.dtype() == DType::f32,
            "inference network: images {} {}, expected [n, s, s, 3] f32", images.describe(),
            dtype_name(images.dtype()));
  const std::int64_t n = images.dim(0);
  if (n <= kSamplesPerPass) return forward_pass(images);
  Tensor embeddings =
      backend_.empty({n, embedding_size_}, DType::f32, MemoryPurpose::activations);
  for (std::int64_t first = 0; first < n; first += kSamplesPerPass) {
    const std::int64_t last = std::min(n, first + kSamplesPerPass);
    Tensor part = embeddings.rows(first, last);
    backend_.copy(forward_pass(images.rows(first, last)), part);
  }
  return embeddings;
}

Tensor InferenceNetwork::forward_pass(const Tensor& images) {
  Backend& be = backend_;
  const std::int64_t n = images.dim(0);
  std::vector<Tensor> values(values_);
  values[input_] = images;
  // Every value is [n, h, w, c]; a Linear's output is [n, 1, 1, c].
  auto as_map = [&](const Tensor& t) {
    return t.rank() == 4 ? t : t.reshape({n, 1, 1, t.numel() / std::max<std::int64_t>(n, 1)});
  };
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    // Whether step i is the last to read value v, which it may then overwrite (never the
    // caller's images).
    auto dies_here = [&](std::int64_t v) {
      return last_use_[v] == static_cast<std::int64_t>(i) && v != input_;
    };
    const Tensor x = as_map(values[s.input]);
    const std::int64_t c = x.dim(3);
    Tensor y;
    switch (s.kind) {
      case Step::Kind::convolution: {
        Conv2dGeometry g;
        g.batch = n;
        g.in_h = x.dim(1);
        g.in_w = x.dim(2);
        g.in_channels = c;
        g.out_channels = s.out_channels;
        g.kernel = s.whole_map ? x.dim(1) : s.kernel;
        g.stride = s.stride;
        g.pad = s.pad;
        g.groups = s.groups;
        ConvEpilogue epilogue;
        if (s.bias.defined()) epilogue.bias = &s.bias;
        if (s.prelu_slope.defined()) epilogue.prelu_slope = &s.prelu_slope;
        epilogue.relu6 = s.relu6;
        if (s.other >= 0) {
          epilogue.accumulate = true;
          const Tensor residual = as_map(values[s.other]);
          PFC_CHECK(residual.shape() == g.output_shape(),
                    "inference network: a sum of {} and a convolution's {}",
                    shape_string(residual.shape()), shape_string(g.output_shape()));
          if (dies_here(s.other)) {
            y = residual;  // its last reader: summed into in place
          } else {
            y = be.empty(g.output_shape(), DType::f32, MemoryPurpose::activations);
            be.copy(residual, y);
          }
        } else {
          y = be.empty(g.output_shape(), types_[s.output], MemoryPurpose::activations);
        }
        be.conv2d_forward_fused(g, x, s.weight, epilogue, y);
        break;
      }
      case Step::Kind::batch_norm: {
        y = be.empty(x.shape(), DType::f32, MemoryPurpose::activations);
        Tensor rows = y.reshape({x.numel() / c, c});
        be.batchnorm_forward_inference(x.reshape({x.numel() / c, c}), s.gamma, s.beta, s.mean,
                                       s.var, s.eps, rows);
        break;
      }
      case Step::Kind::prelu: {
        y = be.empty(x.shape(), DType::f32, MemoryPurpose::activations);
        Tensor rows = y.reshape({x.numel() / c, c});
        be.prelu_forward(x.reshape({x.numel() / c, c}), s.prelu_slope, rows);
        break;
      }
      case Step::Kind::add: {
        y = be.empty(x.shape(), DType::f32, MemoryPurpose::activations);
        be.add(x, as_map(values[s.other]), y);
        break;
      }
      case Step::Kind::layer_norm: {
        const std::int64_t rows = x.numel() / c;
        y = be.empty(x.shape(), types_[s.output], MemoryPurpose::activations);
        Tensor mean = be.empty({rows}, DType::f32, MemoryPurpose::activations);
        Tensor invstd = be.empty({rows}, DType::f32, MemoryPurpose::activations);
        Tensor y_rows = y.reshape({rows, c});
        be.layernorm_forward(x.reshape({rows, c}), s.gamma, s.beta, s.eps, y_rows, mean, invstd);
        break;
      }
      case Step::Kind::relu6: {
        y = dies_here(s.input) ? x : be.empty(x.shape(), DType::f32, MemoryPurpose::activations);
        be.relu6_forward(x, y);
        break;
      }
      case Step::Kind::attention: {
        // A few samples at a time, so that their scores stay in the cache between the
        // products and the softmax, where a pass's would go out to memory and back three
        // times once they pass kAttentionScoreBytes: vit_t's 4 samples hold 2.7 MB of
        // scores, a ViT of 16 heads (vit_l, vit_h) twice that.
        AttentionLayout l{n, x.numel() / (n * c), c / 3, s.heads};
        const auto per_sample =
            std::max<std::int64_t>(1, l.heads * l.tokens * l.tokens * std::int64_t{sizeof(float)});
        const std::int64_t chunk =
            std::max<std::int64_t>(1, std::min(n, kAttentionScoreBytes / per_sample));
        Tensor scores = be.empty({chunk * l.heads * l.tokens, l.tokens}, DType::f32,
                                 MemoryPurpose::activations);
        y = be.empty({x.dim(0), x.dim(1), x.dim(2), l.width}, DType::f32,
                     MemoryPurpose::activations);
        // In bf16, both products take bf16 operands, as the convolutions do.
        Tensor qkv = x.reshape({n * l.tokens, c});
        if (products_ != qkv.dtype()) {
          Tensor rounded = be.empty(qkv.shape(), products_, MemoryPurpose::activations);
          be.cast(qkv, rounded);
          qkv = rounded;
        }
        Tensor out = y.reshape({n * l.tokens, l.width});
        for (std::int64_t first = 0; first < n; first += chunk) {
          l.samples = std::min(chunk, n - first);
          const std::int64_t rows = l.samples * l.tokens;
          Tensor part = out.rows(first * l.tokens, first * l.tokens + rows);
          Tensor part_scores = scores.rows(0, l.samples * l.heads * l.tokens);
          attention_forward(be, l, qkv.rows(first * l.tokens, first * l.tokens + rows),
                            part_scores, part);
        }
        break;
      }
      case Step::Kind::add_parameter: {
        if (dies_here(s.input)) {
          y = x;
        } else {
          y = be.empty(x.shape(), DType::f32, MemoryPurpose::activations);
          be.copy(x, y);
        }
        Tensor per_sample = y.reshape({n, x.numel() / n});
        be.add_row_vector(per_sample, s.parameter);
        break;
      }
    }
    values[s.output] = y;
    for (std::int64_t v = 0; v < values_; ++v)
      if (last_use_[v] == static_cast<std::int64_t>(i)) values[v] = Tensor();
  }
  return values[output_].reshape({n, embedding_size_});
}

}  // namespace pfc
