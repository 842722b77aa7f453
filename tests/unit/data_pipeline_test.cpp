// BatchPipeline: batches come out in order whatever the workers' timing, a failure reaches
// the caller of next() for that batch only, and stop/start begins again at batch 0.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "data/batch_pipeline.h"

namespace pfc {
namespace {

std::vector<Batch> ring(int n) {
  std::vector<Batch> buffers(n);
  for (auto& b : buffers) b.labels = Tensor::host({1}, DType::i64, MemoryPurpose::data);
  return buffers;
}

void slow_fill(std::int64_t k, Batch& batch, int) {
  // Later batches finish first, so ordering is the pipeline's doing.
  std::this_thread::sleep_for(std::chrono::microseconds(200 * (7 - k % 8)));
  if (k == 5) throw std::runtime_error("batch 5 failed");
  batch.labels.data<std::int64_t>()[0] = k;
}

TEST(DataPipeline, DeliversInOrderAndReportsFailuresInPlace) {
  BatchPipeline pipeline(4, ring(6), slow_fill);
  for (std::int64_t k = 0; k < 20; ++k) {
    if (k == 5) {
      EXPECT_THROW(pipeline.next(), std::runtime_error);
      continue;
    }
    EXPECT_EQ(pipeline.next().labels.data<std::int64_t>()[0], k);
  }
  EXPECT_EQ(pipeline.delivered(), 20);
  pipeline.stop();
  pipeline.start();
  EXPECT_EQ(pipeline.delivered(), 0);
  EXPECT_EQ(pipeline.next().labels.data<std::int64_t>()[0], 0);
  EXPECT_EQ(pipeline.next().labels.data<std::int64_t>()[0], 1);
}

TEST(DataPipeline, OneWorkerAndTwoBuffersSuffice) {
  BatchPipeline pipeline(1, ring(2), [](std::int64_t k, Batch& batch, int worker) {
    EXPECT_EQ(worker, 0);
    batch.labels.data<std::int64_t>()[0] = 10 * k;
  });
  for (std::int64_t k = 0; k < 10; ++k)
    EXPECT_EQ(pipeline.next().labels.data<std::int64_t>()[0], 10 * k);
}

}  // namespace
}  // namespace pfc
