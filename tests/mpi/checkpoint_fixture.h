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
inline float centre_momentum(std::int64_t row, std::int64_t column, std::int64_t step) {
  return -centre_value(row, column, step) - 0.5f;
}

inline Tensor class_rows(std::int64_t start, std::int64_t count, std::int64_t step,
                         bool momentum) {
  Tensor t = Tensor::host({count, kEmbedding}, DType::f32);
  for (std::int64_t r = 0; r < count; ++r)
    for (std::int64_t c = 0; c < kEmbedding; ++c)
      t.data<float>()[r * kEmbedding + c] = momentum ? centre_momentum(start + r, c, step)
                                                     : centre_value(start + r, c, step);
  return t;
}

inline NamedTensor named(const std::string& name, const Shape& shape, float offset) {
  Tensor t = Tensor::host(shape, DType::f32);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = offset + static_cast<float>(name.size()) + 0.25f * static_cast<float>(i);
  return {name, t};
}

// What rank `rank` of `world` saves at `step`.
inline Checkpoint checkpoint_at(std::int64_t step, int rank, int world) {
  const ShardLayout layout = ShardLayout::make(kClasses, world, rank, 1.0);
  const auto offset = static_cast<float>(step);
  Checkpoint c;
  for (const auto& [name, shape] : std::vector<std::pair<std::string, Shape>>{
           {"conv1.weight", {4, 3, 3, 3}},
           {"bn1.weight", {4}},
           {"layer1.0.bn2.bias", {4}},
           {"fc.weight", {kEmbedding, 8}}}) {
    c.parameters.push_back(named(name, shape, offset));
    c.momentum.push_back(named(name, shape, -offset));
  }
  c.buffers = {named("bn1.running_mean", {4}, offset + 0.5f),
               named("bn1.running_var", {4}, offset + 1.5f)};
  c.shard.class_start = layout.class_start;
  c.shard.weight = class_rows(layout.class_start, layout.num_local, step, false);
  c.shard.momentum = class_rows(layout.class_start, layout.num_local, step, true);
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

}  // namespace pfc::test
