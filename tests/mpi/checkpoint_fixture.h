// Checkpoint contents for tests, computed from (name, index, step) so that any process, under
// any rank layout, knows the exact value every saved element must read back as; plus a
// scratch folder shared by the ranks of one run.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "io/checkpoint.h"
#include "pfc/shard_layout.h"
#include "support/test_paths.h"

namespace pfc::test {

inline constexpr std::int64_t kClasses = 11;  // not a multiple of 2, 3 or 4: uneven shards
inline constexpr std::int64_t kEmbedding = 6;

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// A fresh folder, emptied by rank 0 before any rank uses it; named by the world size so that
// runs at several sizes do not share it.
inline std::filesystem::path shared_scratch(const std::string& name) {
  const std::string full = name + "_n" + std::to_string(world_size());
  if (world_rank() == 0) scratch_dir(full);
  MPI_Barrier(MPI_COMM_WORLD);
  return scratch_path(full);
}

// Small integers: exact in f32, and distinct for every class, column, tensor and step.
inline float centre_value(std::int64_t row, std::int64_t column, std::int64_t step) {
  return static_cast<float>(step * 10000 + row * 100 + column);
}

// What the class rows hold: the centres (kCentres) or optimiser moment k (1, 2, ...).
inline constexpr int kCentres = 0;

inline Tensor class_rows(std::int64_t start, std::int64_t count, std::int64_t step, int which) {
  Tensor t = Tensor::host({count, kEmbedding}, DType::f32);
  for (std::int64_t r = 0; r < count; ++r)
    for (std::int64_t c = 0; c < kEmbedding; ++c) {
      const float v = centre_value(start + r, c, step);
      t.data<float>()[r * kEmbedding + c] =
          which == kCentres ? v : -v - 0.5f - 1000000.0f * static_cast<float>(which - 1);
    }
  return t;
}

// torch.optim's names of an optimiser's moments.
inline std::vector<std::string> moments_of(const std::string& optimizer) {
  if (optimizer == "adamw") return {"exp_avg", "exp_avg_sq"};
  return {"momentum"};
}

inline NamedTensor named(const std::string& name, const Shape& shape, float offset) {
  Tensor t = Tensor::host(shape, DType::f32);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = offset + static_cast<float>(name.size()) + 0.25f * static_cast<float>(i);
  return {name, t};
}

// What rank `rank` of `world` saves at `step`, with the moments of `optimizer`.
inline Checkpoint checkpoint_at(std::int64_t step, int rank, int world,
                                const std::string& optimizer = "sgd") {
  const ShardLayout layout = ShardLayout::make(kClasses, world, rank, 1.0);
  const auto offset = static_cast<float>(step);
  const std::vector<std::string> moments = moments_of(optimizer);
  Checkpoint c;
  for (const std::string& moment : moments) c.moments.push_back({moment, {}});
  for (const auto& [name, shape] : std::vector<std::pair<std::string, Shape>>{
           {"conv1.weight", {4, 3, 3, 3}},
           {"bn1.weight", {4}},
           {"layer1.0.bn2.bias", {4}},
           {"fc.weight", {kEmbedding, 8}}}) {
    c.parameters.push_back(named(name, shape, offset));
    for (std::size_t k = 0; k < moments.size(); ++k)
      c.moments[k].tensors.push_back(named(name, shape, -offset - 100.0f * static_cast<float>(k)));
  }
  c.buffers = {named("bn1.running_mean", {4}, offset + 0.5f),
               named("bn1.running_var", {4}, offset + 1.5f)};
  c.shard.class_start = layout.class_start;
  c.shard.weight = class_rows(layout.class_start, layout.num_local, step, kCentres);
  for (std::size_t k = 0; k < moments.size(); ++k)
    c.shard.moments.push_back({moments[k], class_rows(layout.class_start, layout.num_local, step,
                                                      static_cast<int>(k) + 1)});
  c.state.optimizer = optimizer;
  c.state.backbone_updates = step - 1;  // as if fp16 had skipped one backbone update
  c.state.classifier_updates = step;
  c.state.step = step;
  c.state.epoch = step / 7;
  c.state.data = {step / 7, (step % 7) * 64};
  c.state.loss_scale = 256.0;
  c.state.loss_scale_clean_steps = step % 100;
  c.state.lr_step = step;
  c.state.seed = 2048;
  c.state.method = "pfc";
  c.state.sample_rate = 0.25;
  c.state.num_classes = kClasses;
  c.state.embedding_size = kEmbedding;
  c.state.config_toml = "num_classes = 11\nembedding_size = 6\n";
  return c;
}

inline void expect_same_tensor(const Tensor& actual, const Tensor& expected,
                               const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  EXPECT_EQ(std::memcmp(actual.raw(), expected.raw(), expected.bytes()), 0) << what;
}

inline void expect_same_named(const std::vector<NamedTensor>& actual,
                              const std::vector<NamedTensor>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].name, expected[i].name);
    expect_same_tensor(actual[i].value, expected[i].value, expected[i].name);
  }
}

inline void expect_same_moments(const std::vector<NamedMoment>& actual,
                                const std::vector<NamedMoment>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].name, expected[i].name);
    expect_same_named(actual[i].tensors, expected[i].tensors);
  }
}

}  // namespace pfc::test
