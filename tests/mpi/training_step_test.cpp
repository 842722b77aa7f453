// TrainingStep, the trainer's optimiser step, on 1..4 ranks. Every rank feeding the same
// micro-batches is one rank's problem W times over: after two steps of two micro-batches the
// backbone and the class centres must be what one rank alone computes (the backbone's gradient
// is the sum of the ranks' shares, as arcface_torch's; biases whose exact gradient is 0 aside),
// for SGD and AdamW, mp, dp and pfc. And
// one step of two micro-batches is the step of their summed gradient, written out here with
// the model's own forward and backward, clipping and per-tensor SGD.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "comm/mpi_comm.h"
#include "core/counter_rng.h"
#include "model/iresnet.h"
#include "pfc/partial_fc.h"
#include "train/grad_clip.h"
#include "train/loss_scaler.h"
#include "train/training_step.h"

namespace pfc {
namespace {

constexpr std::int64_t kBatch = 3, kClasses = 23, kImage = 16, kEmbedding = 8;
constexpr double kLr = 0.05, kClip = 5.0;
// A bound no gradient here reaches: clipping would hide a gradient of the wrong size.
constexpr double kNoClip = 1e9;

IResNetOptions tiny_backbone() {
  IResNetOptions o;
  o.layers = {1, 1, 1, 1};
  o.widths = {4, 8, 8, 8};
  o.image_size = kImage;
  o.embedding_size = kEmbedding;
  return o;
}

PartialFcOptions head_options(PfcMethod method, OptimizerKind kind) {
  PartialFcOptions o;
  o.num_classes = kClasses;
  o.embedding_size = kEmbedding;
  o.sample_rate = method == PfcMethod::pfc ? 0.3 : 1.0;
  o.method = method;
  o.seed = 5;
  o.optimizer.kind = kind;
  o.optimizer.weight_decay = kind == OptimizerKind::adamw ? 0.1 : 5e-4;
  return o;
}

// Micro-batch i of every step: its own images and labels, the same on every rank.
struct Batches {
  std::vector<Tensor> images, labels;
  MicroBatch operator()(std::int64_t i) const {
    const auto k = static_cast<std::size_t>(i);
    return {&images[k], &labels[k]};
  }
};

Batches batches() {
  Batches b;
  for (int i = 0; i < 2; ++i) {
    Tensor images = Tensor::host({kBatch, kImage, kImage, 3}, DType::f32);
    const std::uint64_t key = fnv1a64("micro-batch " + std::to_string(i));
    for (std::int64_t j = 0; j < images.numel(); ++j)
      images.data<float>()[j] = golden_fill_value(key, static_cast<std::uint64_t>(j), 0, 1);
    Tensor labels = Tensor::host({kBatch}, DType::i64);
    for (std::int64_t j = 0; j < kBatch; ++j)
      labels.data<std::int64_t>()[j] = (7 * j + 11 * i) % kClasses;
    b.images.push_back(images);
    b.labels.push_back(labels);
  }
  return b;
}

std::vector<float> values(const Tensor& host) {
  return {host.data<float>(), host.data<float>() + host.numel()};
}

double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

struct Trained {
  std::vector<std::pair<std::string, std::vector<float>>> backbone;  // by parameter
  std::vector<float> centres;
  std::vector<double> losses;
};

// A bias a training-mode batch-norm follows has an exact gradient of 0: what it gets is
// rounding noise, which differs between worlds (and AdamW divides by it); initialised to 0, its
// value is that noise alone.
bool exact_zero_gradient(const std::string& name) {
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return name == "bn2.bias" || name == "fc.bias" || ends_with(".bn3.bias") ||
         ends_with(".downsample.1.bias");
}

// Two steps of two micro-batches on comm, unclipped.
Trained train(Comm& comm, PfcMethod method, OptimizerKind kind) {
  auto backend = make_backend(BackendKind::cpu);
  IResNet model(*backend, tiny_backbone());
  const PartialFcOptions o = head_options(method, kind);
  PartialFc head(*backend, comm, o);
  // Sampled runs inject their classes (every label among them): different worlds would draw
  // different negatives.
  if (method == PfcMethod::pfc) head.inject_sampled_classes({0, 2, 4, 7, 9, 11, 14, 15, 18, 22});
  LossScaler scaler(false, kBatch);
  TrainingStep step(*backend, comm, model, head, scaler, {2, kNoClip, o.optimizer});
  model.initialize(3);
  const Batches micro = batches();
  Trained t;
  for (std::int64_t s = 0; s < 2; ++s) {
    const StepResult r = step.run(micro, s, kLr);
    EXPECT_TRUE(r.backbone_updated);
    t.losses.insert(t.losses.end(), r.losses.begin(), r.losses.end());
  }
  for (const Parameter* p : model.parameters())
    t.backbone.emplace_back(p->name, values(backend->to_host(p->value)));
  t.centres = values(head.gather_global_weight());
  return t;
}

struct StepCase {
  std::string name;
  PfcMethod method;
  OptimizerKind optimizer;
};

class TrainingStepWorldTest : public ::testing::TestWithParam<StepCase> {};

TEST_P(TrainingStepWorldTest, KRanksFeedingTheSameBatchesEqualOneRank) {
  const StepCase& c = GetParam();
  MpiComm world(MPI_COMM_WORLD), self(MPI_COMM_SELF);
  const Trained all = train(world, c.method, c.optimizer);
  const Trained one = train(self, c.method, c.optimizer);
  ASSERT_EQ(all.losses.size(), 4u);
  for (std::size_t i = 0; i < all.losses.size(); ++i)
    EXPECT_NEAR(all.losses[i], one.losses[i], 1e-5 * one.losses[i]) << c.name << " loss " << i;
  for (std::size_t i = 0; i < one.backbone.size(); ++i) {
    const std::string& name = one.backbone[i].first;
    if (exact_zero_gradient(name)) continue;
    // Unclipped steps of this size amplify the worlds' different rounding to ~1e-5; a
    // gradient of the wrong size shows as losses apart by tens of per cent.
    EXPECT_LT(relative_error(all.backbone[i].second, one.backbone[i].second), 2e-4)
        << c.name << " " << name;
  }
  EXPECT_LT(relative_error(all.centres, one.centres), 1e-5) << c.name << " centres";
}

INSTANTIATE_TEST_SUITE_P(
    MethodsAndOptimizers, TrainingStepWorldTest,
    ::testing::Values(StepCase{"mp_sgd", PfcMethod::mp, OptimizerKind::sgd},
                      StepCase{"dp_sgd", PfcMethod::dp, OptimizerKind::sgd},
                      StepCase{"pfc_sgd", PfcMethod::pfc, OptimizerKind::sgd},
                      StepCase{"mp_adamw", PfcMethod::mp, OptimizerKind::adamw},
                      StepCase{"pfc_adamw", PfcMethod::pfc, OptimizerKind::adamw}),
    [](const auto& info) { return info.param.name; });

// One step of two micro-batches, written out: each through forward and backward, the
// backbone's gradients summed tensor by tensor (not averaged), summed over the ranks, clipped
// to kClip over all of them, then SGD per tensor; the centres through PartialFc's own
// accumulation. TrainingStep must land on the same parameters.
TEST(TrainingStep, OneStepOfTwoMicroBatchesIsTheStepOfTheirSummedGradient) {
  MpiComm world(MPI_COMM_WORLD);
  auto backend = make_backend(BackendKind::cpu);
  const PartialFcOptions o = head_options(PfcMethod::mp, OptimizerKind::sgd);
  const Batches micro = batches();

  IResNet model(*backend, tiny_backbone());
  PartialFc head(*backend, world, o);
  LossScaler scaler(false, kBatch);
  TrainingStep step(*backend, world, model, head, scaler, {2, kClip, o.optimizer});
  model.initialize(3);
  step.run(micro, 0, kLr);

  IResNet plain(*backend, tiny_backbone());
  PartialFc plain_head(*backend, world, o);
  plain.initialize(3);
  std::vector<Tensor> sums;  // one per trained parameter
  for (std::int64_t i = 0; i < 2; ++i) {
    const MicroBatch b = micro(i);
    Tensor embeddings_grad;
    plain_head.forward_backward(plain.forward(*b.images, ForwardMode::training), *b.labels,
                                embeddings_grad, i,
                                i == 0 ? CentreGradient::replace : CentreGradient::accumulate);
    plain.backward(embeddings_grad);
    std::size_t k = 0;
    for (const Parameter* p : plain.parameters()) {
      if (!p->trainable) continue;
      if (i == 0)
        sums.push_back(backend->to_host(p->grad));
      else
        backend->axpy(1.0, p->grad, sums[k]);
      ++k;
    }
  }
  for (Tensor& g : sums) world.all_reduce(g, ReduceOp::sum);
  clip_grad_norm(*backend, sums, kClip);
  std::size_t k = 0;
  for (Parameter* p : plain.parameters()) {
    if (!p->trainable) continue;
    Tensor momentum = backend->zeros(p->value.shape(), DType::f32, MemoryPurpose::optimizer);
    backend->sgd_update(p->value, sums[k++], momentum, kLr, o.optimizer.momentum,
                        o.optimizer.weight_decay, {});
  }
  plain_head.step(kLr);

  for (std::size_t i = 0; i < model.parameters().size(); ++i) {
    const Parameter& a = *model.parameters()[i];
    const Parameter& b = *plain.parameters()[i];
    EXPECT_LT(relative_error(values(backend->to_host(a.value)), values(backend->to_host(b.value))),
              1e-6)
        << a.name;
  }
  EXPECT_EQ(values(head.gather_global_weight()), values(plain_head.gather_global_weight()));
}

}  // namespace
}  // namespace pfc
