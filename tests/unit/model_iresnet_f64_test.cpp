// IResNet in an f64 run: every master, gradient, batch-norm buffer and the embeddings are f64
// (nothing is rounded to f32 on the way), an import keeps f64 digits that f32 cannot hold
// while the named f32 tensors of checkpoints and exporters are rounded once, and the backward
// pass is the derivative of the forward: parameter gradients against central differences (the
// shared checker) on a small network.
#include <gtest/gtest.h>

#include "backend/backend.h"
#include "model/iresnet.h"
#include "support/gradient_checker.h"

namespace pfc {
namespace {

// 32 x 32 images in batches of 3: the last stage's batch-norms normalise 12 values. (At 16 x 16
// and batch 2 they would see 2, and an output of +-1 that depends on its input through eps
// alone amplifies rounding beyond what central differences can resolve.)
IResNetOptions tiny_f64() {
  IResNetOptions o;
  o.layers = {1, 1, 1, 1};
  o.widths = {4, 8, 8, 8};
  o.image_size = 32;
  o.embedding_size = 8;
  o.precision = DType::f64;
  return o;
}

TEST(IResNetF64, EverythingIsF64) {
  auto be = make_backend(BackendKind::cpu);
  IResNet model(*be, tiny_f64());
  model.initialize(3);
  EXPECT_EQ(model.master_dtype(), DType::f64);
  for (const Parameter* p : model.parameters()) {
    EXPECT_EQ(p->value.dtype(), DType::f64) << p->name;
    EXPECT_EQ(p->grad.dtype(), DType::f64) << p->name;
    EXPECT_FALSE(p->working.defined()) << p->name;
  }
  for (const Buffer* b : model.buffers()) EXPECT_EQ(b->value.dtype(), DType::f64) << b->name;
  const Tensor images = test::random_uniform({3, 32, 32, 3}, DType::f32, 5);
  const Tensor embeddings = model.forward(images, ForwardMode::training);
  EXPECT_EQ(embeddings.dtype(), DType::f64);
  model.backward(test::random_uniform(embeddings.shape(), DType::f64, 6));

  // An f64 value survives import and export; an f32 one is widened exactly.
  const Parameter& bias = *model.find_parameter("fc.bias");
  Tensor precise = test::random_uniform(bias.torch_shape, DType::f64, 7);
  precise.data<double>()[0] = 1.0 + 1e-12;
  model.import_parameter("fc.bias", precise);
  const Tensor back = model.export_parameter(bias);
  ASSERT_EQ(back.dtype(), DType::f64);
  EXPECT_EQ(back.data<double>()[0], 1.0 + 1e-12);
  const Tensor as_f32 = test::random_uniform(bias.torch_shape, DType::f32, 8);
  model.import_parameter("fc.bias", as_f32);
  EXPECT_EQ(model.export_parameter(bias).data<double>()[1],
            static_cast<double>(as_f32.data<float>()[1]));
  // What checkpoints and exporters read stays f32, rounded once.
  model.import_parameter("fc.bias", precise);
  const NamedTensor named = torch_named_value(*be, bias);
  ASSERT_EQ(named.value.dtype(), DType::f32);
  EXPECT_EQ(named.value.data<float>()[2], static_cast<float>(precise.data<double>()[2]));
  EXPECT_EQ(torch_named_value(*be, *model.buffers()[0]).value.dtype(), DType::f32);
}

// loss = sum(R * embeddings): d loss / d parameter for parameters of every kind of layer
// (stem convolution, a block's batch-norm and PReLU, fc, the features batch-norm's shift).
TEST(IResNetF64, ParameterGradientsAreTheDerivativesOfTheForward) {
  auto be = make_backend(BackendKind::cpu);
  IResNet model(*be, tiny_f64());
  model.initialize(3);
  const Tensor images = test::random_uniform({3, 32, 32, 3}, DType::f64, 9);
  const std::vector<std::string> names = {"conv1.weight", "layer2.0.bn2.weight",
                                          "layer2.0.bn2.bias", "layer3.0.prelu.weight",
                                          "fc.bias", "features.bias"};
  std::vector<test::GradInput> inputs;
  for (const std::string& name : names)
    inputs.push_back({name, model.export_parameter(*model.find_parameter(name))});
  const auto load = [&](const std::vector<Tensor>& values) {
    for (std::size_t i = 0; i < names.size(); ++i) model.import_parameter(names[i], values[i]);
  };
  const test::ForwardFn forward = [&](const std::vector<Tensor>& values) {
    load(values);
    std::vector<Tensor> out{be->to_host(model.forward(images, ForwardMode::training))};
    model.backward(be->zeros(out[0].shape(), DType::f64, MemoryPurpose::gradients));
    return out;
  };
  const test::BackwardFn backward = [&](const std::vector<Tensor>& values,
                                        const std::vector<Tensor>& output_grads) {
    load(values);
    model.forward(images, ForwardMode::training);
    model.backward(output_grads[0]);
    std::vector<Tensor> grads;
    for (const std::string& name : names) {
      const Parameter& p = *model.find_parameter(name);
      grads.push_back(model.export_parameter(p, p.grad));
    }
    return grads;
  };
  test::check_gradients(inputs, forward, backward, {1e-6, 1e-6, 1e-9, 11});
}

}  // namespace
}  // namespace pfc
