// flatten_gradients: every trainable parameter's grad becomes a view of one buffer, in order,
// with its shape, and a backward pass through those views gives the gradients it gave before.
#include <gtest/gtest.h>

#include "backend/backend.h"
#include "core/counter_rng.h"
#include "model/flat_gradients.h"
#include "model/iresnet.h"

namespace pfc {
namespace {

IResNetOptions tiny_options() {
  IResNetOptions o;
  o.layers = {1, 1, 1, 1};
  o.widths = {4, 8, 8, 8};
  o.image_size = 16;
  o.embedding_size = 8;
  return o;
}

Tensor images(std::int64_t n, std::int64_t size) {
  Tensor t = Tensor::host({n, size, size, 3}, DType::f32);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = golden_fill_value(fnv1a64("images"), static_cast<std::uint64_t>(i), 0, 1);
  return t;
}

// The model's gradients after one forward and backward on fixed inputs.
std::vector<std::vector<float>> gradients_of(IResNet& model, Backend& be) {
  const Tensor embeddings = model.forward(images(3, 16));
  Tensor grad = be.empty(embeddings.shape(), DType::f32, MemoryPurpose::gradients);
  for (std::int64_t i = 0; i < grad.numel(); ++i)
    grad.data<float>()[i] = golden_fill_value(fnv1a64("dE"), static_cast<std::uint64_t>(i), 0, 1);
  model.backward(grad);
  std::vector<std::vector<float>> out;
  for (const Parameter* p : model.parameters())
    out.emplace_back(p->grad.data<float>(), p->grad.data<float>() + p->grad.numel());
  return out;
}

TEST(FlatGradients, ViewsInOrderWithTheirShapesAndTheSameBackward) {
  auto be = make_backend(BackendKind::cpu, 0);
  IResNet model(*be, tiny_options());
  model.initialize(5);
  const auto before = gradients_of(model, *be);

  std::vector<Parameter*> trainable;
  std::vector<Shape> shapes;
  for (Parameter* p : model.parameters())
    if (p->trainable) {
      trainable.push_back(p);
      shapes.push_back(p->grad.shape());
    }
  Tensor flat = flatten_gradients(*be, trainable);

  std::int64_t offset = 0;
  for (std::size_t i = 0; i < trainable.size(); ++i) {
    EXPECT_EQ(trainable[i]->grad.shape(), shapes[i]) << trainable[i]->name;
    EXPECT_EQ(trainable[i]->grad.data<float>(), flat.data<float>() + offset) << trainable[i]->name;
    offset += trainable[i]->grad.numel();
  }
  EXPECT_EQ(offset, flat.numel());

  const auto after = gradients_of(model, *be);
  ASSERT_EQ(before.size(), after.size());
  for (std::size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(before[i], after[i]) << model.parameters()[i]->name;
}

}  // namespace
}  // namespace pfc
