// A pool of worker threads that fill a bounded ring of batch buffers ahead of the trainer.
// Batches are numbered 0, 1, 2, ... from the last start; workers take numbers in order,
// fill them concurrently, and next() hands them out in order, so the stream is the same
// whatever the number of workers or their timing. A buffer lent by next() returns to the
// ring at the following call.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "data/data_source.h"

namespace pfc {

class BatchPipeline {
 public:
  // fill(k, batch, worker) writes batch k into `batch`; `worker` in [0, workers) lets the
  // caller keep per-thread state (decoders, read buffers). An exception from fill reaches
  // the caller of next() for that batch.
  using Fill = std::function<void(std::int64_t k, Batch& batch, int worker)>;

  // `buffers` (at least 2) are the ring; they are filled in place.
  BatchPipeline(int workers, std::vector<Batch> buffers, Fill fill);
  ~BatchPipeline();
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  // Waits for the next batch in order and returns it (valid until the next call or stop).
  const Batch& next();
  // stop() joins the workers and drops what they produced; start() begins again at batch 0
  // (the constructor starts). Between the two the caller may change what fill reads.
  void stop();
  void start();
  // Batches next() has returned since the last start.
  std::int64_t delivered() const { return delivered_; }

 private:
  enum class SlotState { free, filling, ready };
  struct Slot {
    Batch batch;
    SlotState state = SlotState::free;
    std::int64_t k = -1;
    std::exception_ptr error;
  };

  void work(int worker);

  int workers_;
  Fill fill_;
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable slot_freed_;
  std::condition_variable slot_ready_;
  bool stopping_ = false;
  std::int64_t next_to_fill_ = 0;
  std::int64_t delivered_ = 0;
  int lent_ = -1;
};

}  // namespace pfc
