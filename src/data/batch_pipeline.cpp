#include "data/batch_pipeline.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace pfc {

BatchPipeline::BatchPipeline(int workers, std::vector<Batch> buffers, Fill fill)
    : workers_(std::max(1, workers)), fill_(std::move(fill)) {
  PFC_CHECK(buffers.size() >= 2, "a batch pipeline needs at least 2 buffers, got {}",
            buffers.size());
  for (auto& b : buffers) slots_.push_back(Slot{std::move(b), SlotState::free, -1, nullptr});
  start();
}

BatchPipeline::~BatchPipeline() { stop(); }

void BatchPipeline::start() {
  PFC_CHECK(threads_.empty(), "batch pipeline started twice");
  stopping_ = false;
  next_to_fill_ = 0;
  delivered_ = 0;
  lent_ = -1;
  for (auto& slot : slots_) slot = Slot{std::move(slot.batch), SlotState::free, -1, nullptr};
  for (int w = 0; w < workers_; ++w) threads_.emplace_back([this, w] { work(w); });
}

void BatchPipeline::stop() {
  if (threads_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  slot_freed_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void BatchPipeline::work(int worker) {
  std::unique_lock lock(mutex_);
  for (;;) {
    Slot* slot = nullptr;
    slot_freed_.wait(lock, [&] {
      if (stopping_) return true;
      auto it = std::find_if(slots_.begin(), slots_.end(),
                             [](const Slot& s) { return s.state == SlotState::free; });
      slot = it == slots_.end() ? nullptr : &*it;
      return slot != nullptr;
    });
    if (stopping_) return;
    slot->state = SlotState::filling;
    slot->k = next_to_fill_++;
    lock.unlock();
    std::exception_ptr error;
    try {
      fill_(slot->k, slot->batch, worker);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    slot->error = error;
    slot->state = SlotState::ready;
    slot_ready_.notify_all();
  }
}

const Batch& BatchPipeline::next() {
  std::unique_lock lock(mutex_);
  if (lent_ >= 0) {
    slots_[lent_].state = SlotState::free;
    lent_ = -1;
    slot_freed_.notify_one();
  }
  Slot* slot = nullptr;
  slot_ready_.wait(lock, [&] {
    auto it = std::find_if(slots_.begin(), slots_.end(), [&](const Slot& s) {
      return s.state == SlotState::ready && s.k == delivered_;
    });
    slot = it == slots_.end() ? nullptr : &*it;
    return slot != nullptr;
  });
  lent_ = static_cast<int>(slot - slots_.data());
  ++delivered_;
  if (slot->error) {
    // The slot stays lent and returns to the ring at the next call, as a good batch would.
    std::exception_ptr error = std::exchange(slot->error, nullptr);
    std::rethrow_exception(error);
  }
  return slot->batch;
}

}  // namespace pfc
