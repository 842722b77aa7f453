// flatten_parameters on a small IResNet: every trainable parameter's value, grad and working
// copy become views of the flat buffers with their contents and shapes kept, the parameters
// with working copies first (fp16 mode: the convolutions' f16 copies), and view_of finds each
// one's part of a buffer of the same layout (an optimiser moment); an f64 run flattens f64
// masters and gradients and has no working copies; the frozen features.weight stays out; a
// backward pass through the views, one flat SGD update and one flat refresh give bit for bit
// what the per-tensor forms give.
#include <gtest/gtest.h>

#include <cstring>

#include "backend/backend.h"
#include "core/counter_rng.h"
#include "core/half.h"
#include "model/flat_parameters.h"
#include "model/iresnet.h"

namespace pfc {
namespace {

constexpr double kLr = 0.1, kMomentum = 0.9, kDecay = 5e-4;

// f16 activations: fp16 mode, whose convolutions have f16 working copies (built on the CPU
// backend, which holds and casts f16 but does not run f16 layers: no forward there). f64: an
// f64 run, all masters f64.
IResNetOptions tiny_options(DType activations) {
  IResNetOptions o;
  o.layers = {1, 1, 1, 1};
  o.widths = {4, 8, 8, 8};
  o.image_size = 16;
  o.embedding_size = 8;
  o.precision = activations;
  return o;
}

Tensor images(std::int64_t n, std::int64_t size) {
  Tensor t = Tensor::host({n, size, size, 3}, DType::f32);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = golden_fill_value(fnv1a64("images"), static_cast<std::uint64_t>(i), 0, 1);
  return t;
}

// The bytes of a host tensor, to compare bit for bit whatever its dtype.
std::vector<unsigned char> bytes_of(const Tensor& t) {
  const auto* b = static_cast<const unsigned char*>(t.raw());
  return {b, b + t.bytes()};
}

// Whether t's data lies inside flat's.
bool inside(const Tensor& t, const Tensor& flat) {
  if (!t.defined() || !flat.defined()) return false;
  const auto* begin = static_cast<const unsigned char*>(flat.raw());
  const auto* p = static_cast<const unsigned char*>(t.raw());
  return p >= begin && p + t.bytes() <= begin + flat.bytes();
}

std::ptrdiff_t offset_in(const Tensor& t, const Tensor& flat) {
  return (static_cast<const unsigned char*>(t.raw()) -
          static_cast<const unsigned char*>(flat.raw())) /
         static_cast<std::ptrdiff_t>(dtype_size(t.dtype()));
}

// One forward and backward on fixed inputs, filling every parameter's grad.
void backward_once(IResNet& model, Backend& be) {
  const Tensor embeddings = model.forward(images(3, 16), ForwardMode::training);
  Tensor grad = be.empty(embeddings.shape(), embeddings.dtype(), MemoryPurpose::gradients);
  for (std::int64_t i = 0; i < grad.numel(); ++i) {
    const double v = golden_fill_value(fnv1a64("dE"), static_cast<std::uint64_t>(i), 0, 1);
    if (grad.dtype() == DType::f64)
      grad.data<double>()[i] = v;
    else
      grad.data<float>()[i] = static_cast<float>(v);
  }
  model.backward(grad);
}

// Gradients without a forward (fp16 mode cannot run on the CPU): fixed values per parameter
// and step, in the masters' type.
void fill_gradients(IResNet& model, Backend& be, int step) {
  for (Parameter* p : model.parameters()) {
    Tensor host = Tensor::host(p->grad.shape(), DType::f64);
    const std::uint64_t key = fnv1a64(p->name) + static_cast<std::uint64_t>(step);
    for (std::int64_t i = 0; i < host.numel(); ++i)
      host.data<double>()[i] = golden_fill_value(key, static_cast<std::uint64_t>(i), 0, 1);
    be.copy_cast(host, p->grad);
  }
}

// The gradients of one step: from a backward pass where the backend runs the mode's layers.
void compute_gradients(IResNet& model, Backend& be, int step) {
  if (model.options().precision.activations == DType::f16) {
    fill_gradients(model, be, step);
  } else {
    backward_once(model, be);
  }
}

struct Snapshot {
  std::vector<std::vector<unsigned char>> value, grad, working;
};

Snapshot snapshot(const IResNet& model) {
  Snapshot s;
  for (const Parameter* p : model.parameters()) {
    s.value.push_back(bytes_of(p->value));
    s.grad.push_back(bytes_of(p->grad));
    s.working.push_back(p->working.defined() ? bytes_of(p->working)
                                             : std::vector<unsigned char>{});
  }
  return s;
}

const Parameter& features_weight(const IResNet& model) {
  const Parameter* p = model.find_parameter("features.weight");
  EXPECT_NE(p, nullptr);
  EXPECT_FALSE(p->trainable);
  return *p;
}

TEST(FlatParameters, ViewsKeepShapesAndContentsWithWorkingCopiesFirst) {
  auto be = make_backend(BackendKind::cpu, 0);
  IResNet model(*be, tiny_options(DType::f16));
  model.initialize(5);
  fill_gradients(model, *be, 0);  // non-zero gradients, to see them carried over
  const Snapshot before = snapshot(model);
  std::vector<Shape> shapes;
  for (const Parameter* p : model.parameters()) shapes.push_back(p->value.shape());

  FlatParameters flat = flatten_parameters(*be, model.parameters());
  const Tensor moment = be->zeros(flat.value.shape(), DType::f32, MemoryPurpose::optimizer);
  ASSERT_TRUE(flat.working.defined());
  EXPECT_EQ(flat.working.dtype(), DType::f16);
  EXPECT_EQ(flat.value.dtype(), DType::f32);
  EXPECT_EQ(flat.working.numel(), flat.working_values.numel());
  EXPECT_EQ(flat.working_values.raw(), flat.value.raw());
  EXPECT_TRUE(flat.decay);

  const Snapshot after = snapshot(model);
  std::int64_t with_copies = 0;
  for (std::size_t i = 0; i < model.parameters().size(); ++i) {
    const Parameter& p = *model.parameters()[i];
    EXPECT_EQ(before.value[i], after.value[i]) << p.name;
    EXPECT_EQ(before.grad[i], after.grad[i]) << p.name;
    EXPECT_EQ(before.working[i], after.working[i]) << p.name;
    EXPECT_EQ(p.value.shape(), shapes[i]) << p.name;
    if (!p.trainable) continue;
    EXPECT_EQ(p.grad.shape(), shapes[i]) << p.name;
    EXPECT_EQ(flat.view_of(p, moment).shape(), shapes[i]) << p.name;
    ASSERT_TRUE(inside(p.value, flat.value)) << p.name;
    const std::ptrdiff_t offset = offset_in(p.value, flat.value);
    EXPECT_EQ(offset % 64, 0) << p.name;
    EXPECT_EQ(offset_in(p.grad, flat.grad), offset) << p.name;
    EXPECT_EQ(offset_in(flat.view_of(p, moment), moment), offset) << p.name;
    if (p.working.defined()) {
      ++with_copies;
      EXPECT_TRUE(inside(p.value, flat.working_values)) << p.name;
      EXPECT_EQ(p.working.shape(), shapes[i]) << p.name;
      EXPECT_EQ(offset_in(p.working, flat.working), offset) << p.name;
    } else {
      EXPECT_FALSE(inside(p.value, flat.working_values)) << p.name;
    }
  }
  EXPECT_GT(with_copies, 0);
}

// An f64 run: masters and gradients f64 in the flat buffers, no working copies.
TEST(FlatParameters, F64RunFlattensF64MastersWithoutWorkingCopies) {
  auto be = make_backend(BackendKind::cpu, 0);
  IResNet model(*be, tiny_options(DType::f64));
  model.initialize(5);
  backward_once(model, *be);
  const Snapshot before = snapshot(model);
  FlatParameters flat = flatten_parameters(*be, model.parameters());
  EXPECT_FALSE(flat.working.defined());
  for (const Tensor* t : {&flat.value, &flat.grad}) EXPECT_EQ(t->dtype(), DType::f64);
  const Snapshot after = snapshot(model);
  for (std::size_t i = 0; i < model.parameters().size(); ++i) {
    const Parameter& p = *model.parameters()[i];
    EXPECT_EQ(p.value.dtype(), DType::f64) << p.name;
    EXPECT_FALSE(p.working.defined()) << p.name;
    EXPECT_EQ(before.value[i], after.value[i]) << p.name;
    EXPECT_EQ(before.grad[i], after.grad[i]) << p.name;
  }
}

TEST(FlatParameters, FrozenParameterStaysOut) {
  auto be = make_backend(BackendKind::cpu, 0);
  IResNet model(*be, tiny_options(DType::f16));
  model.initialize(5);
  FlatParameters flat = flatten_parameters(*be, model.parameters());
  const Parameter& frozen = features_weight(model);
  EXPECT_FALSE(inside(frozen.value, flat.value));
  EXPECT_FALSE(inside(frozen.grad, flat.grad));
  EXPECT_FALSE(inside(frozen.working, flat.working));
  Tensor momentum = be->zeros(flat.value.shape(), DType::f32, MemoryPurpose::optimizer);
  EXPECT_THROW(flat.view_of(frozen, momentum), Error);

  // A step over the flat buffers leaves it at 1.
  be->fill(flat.grad, 1.0);
  be->sgd_update(flat.value, flat.grad, momentum, kLr, kMomentum, kDecay, {});
  for (std::int64_t k = 0; k < frozen.value.numel(); ++k)
    EXPECT_EQ(frozen.value.data<float>()[k], 1.0f);
}

TEST(FlatParameters, WritesThroughTheFlatBuffersShowInTheParameters) {
  auto be = make_backend(BackendKind::cpu, 0);
  IResNet model(*be, tiny_options(DType::f16));
  model.initialize(5);
  FlatParameters flat = flatten_parameters(*be, model.parameters());
  be->fill(flat.value, 2.0);
  be->fill(flat.grad, 3.0);
  Tensor moment = be->empty(flat.value.shape(), DType::f32, MemoryPurpose::optimizer);
  be->fill(moment, 4.0);
  be->fill(flat.working, 5.0);
  for (const Parameter* p : model.parameters()) {
    if (!p->trainable) continue;
    const Tensor moment_view = flat.view_of(*p, moment);
    for (std::int64_t k = 0; k < p->value.numel(); ++k) {
      ASSERT_EQ(p->value.data<float>()[k], 2.0f) << p->name;
      ASSERT_EQ(p->grad.data<float>()[k], 3.0f) << p->name;
      ASSERT_EQ(moment_view.data<float>()[k], 4.0f) << p->name;
      if (p->working.defined())
        ASSERT_EQ(p->working.data<Half>()[k].to_float(), 5.0f) << p->name;
    }
  }
}

TEST(FlatParameters, BackwardThroughTheViewsGivesTheSameGradients) {
  for (DType activations : {DType::f32, DType::f64}) {
    auto be = make_backend(BackendKind::cpu, 0);
    IResNet model(*be, tiny_options(activations));
    model.initialize(5);
    backward_once(model, *be);
    const Snapshot before = snapshot(model);
    for (Parameter* p : model.parameters()) be->fill(p->grad, 0.0);
    flatten_parameters(*be, model.parameters());
    backward_once(model, *be);
    const Snapshot after = snapshot(model);
    for (std::size_t i = 0; i < before.grad.size(); ++i)
      EXPECT_EQ(before.grad[i], after.grad[i])
          << model.parameters()[i]->name << " " << dtype_name(activations);
  }
}

// Three steps of one flat update and one flat refresh against the per-tensor loop and
// Backbone::refresh_working_copies on a twin model; f32 (no working copies), f16 (f16 copies)
// and f64 (f64 masters).
TEST(FlatParameters, OneUpdateAndOneRefreshEqualThePerTensorForms) {
  for (DType activations : {DType::f32, DType::f16, DType::f64}) {
    auto be = make_backend(BackendKind::cpu, 0);
    IResNet flat_model(*be, tiny_options(activations));
    IResNet model(*be, tiny_options(activations));
    flat_model.initialize(7);
    model.initialize(7);
    std::vector<Tensor> momenta;  // model's, one per parameter
    for (Parameter* p : model.parameters())
      momenta.push_back(be->zeros(p->value.shape(), p->value.dtype(), MemoryPurpose::optimizer));
    FlatParameters flat = flatten_parameters(*be, flat_model.parameters());
    Tensor flat_momentum =
        be->zeros(flat.value.shape(), flat.value.dtype(), MemoryPurpose::optimizer);
    EXPECT_EQ(flat.working.defined(), activations == DType::f16);

    for (int step = 0; step < 3; ++step) {
      compute_gradients(flat_model, *be, step);
      compute_gradients(model, *be, step);
      be->sgd_update(flat.value, flat.grad, flat_momentum, kLr, kMomentum, kDecay, {});
      flat.refresh_working_copies(*be);
      for (std::size_t i = 0; i < model.parameters().size(); ++i) {
        Parameter* p = model.parameters()[i];
        if (p->trainable) be->sgd_update(p->value, p->grad, momenta[i], kLr, kMomentum, kDecay, {});
      }
      model.refresh_working_copies();

      const Snapshot a = snapshot(flat_model);
      const Snapshot b = snapshot(model);
      for (std::size_t i = 0; i < a.value.size(); ++i) {
        const Parameter& p = *model.parameters()[i];
        const Parameter& q = *flat_model.parameters()[i];
        ASSERT_EQ(a.value[i], b.value[i]) << p.name << " step " << step;
        ASSERT_EQ(a.working[i], b.working[i]) << p.name << " step " << step;
        if (p.trainable)
          ASSERT_EQ(bytes_of(flat.view_of(q, flat_momentum)), bytes_of(momenta[i]))
              << p.name << " step " << step;
      }
    }
  }
}

TEST(FlatParameters, RefusesMixedWeightDecay) {
  auto be = make_backend(BackendKind::cpu, 0);
  IResNet model(*be, tiny_options(DType::f32));
  model.parameters()[1]->decay = false;
  EXPECT_THROW(flatten_parameters(*be, model.parameters()), Error);
}

}  // namespace
}  // namespace pfc
