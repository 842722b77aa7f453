// The device arena: alignment, best-fit reuse, coalescing, exact accounting by purpose with
// peaks, and the out-of-memory error with its figures; the byte-count parser of
// PFC_CUDA_ARENA_BYTES. Each test reserves a small arena of its own.
#include <gtest/gtest.h>

#include <string>

#include "backend/backend.h"
#include "core/error.h"

#ifdef PFC_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/device_arena.h"
#include "backend/cuda/pinned_host_allocator.h"
#endif

namespace pfc {
namespace {

#ifdef PFC_HAVE_CUDA

constexpr std::size_t kMiB = std::size_t{1} << 20;

class DeviceArenaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  }
};

std::size_t index_of(const MemoryPurpose p) { return static_cast<std::size_t>(p); }

TEST_F(DeviceArenaTest, AlignsAndCountsByPurpose) {
  DeviceArena arena(64 * kMiB);
  EXPECT_EQ(arena.capacity(), 64 * kMiB);
  void* a = arena.allocate(1, MemoryPurpose::weights);
  void* b = arena.allocate(1000, MemoryPurpose::activations);
  void* c = arena.allocate(3 * kMiB, MemoryPurpose::optimizer);
  for (void* p : {a, b, c})
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % DeviceArena::kAlignment, 0u);
  // The ledger holds the aligned sizes, so its total is what the arena holds.
  MemorySnapshot s = arena.ledger().snapshot();
  EXPECT_EQ(s.in_use[index_of(MemoryPurpose::weights)], 256);
  EXPECT_EQ(s.in_use[index_of(MemoryPurpose::activations)], 1024);
  EXPECT_EQ(s.in_use[index_of(MemoryPurpose::optimizer)], static_cast<std::int64_t>(3 * kMiB));
  EXPECT_EQ(s.total_in_use, static_cast<std::int64_t>(arena.bytes_in_use()));

  arena.deallocate(b, 1000, MemoryPurpose::activations);
  s = arena.ledger().snapshot();
  EXPECT_EQ(s.in_use[index_of(MemoryPurpose::activations)], 0);
  EXPECT_EQ(s.peak_by_purpose[index_of(MemoryPurpose::activations)], 1024);
  const std::int64_t peak_before_reset = s.total_peak;
  arena.ledger().reset_peak();
  s = arena.ledger().snapshot();
  EXPECT_LT(s.total_peak, peak_before_reset);
  EXPECT_EQ(s.total_peak, s.total_in_use);

  arena.deallocate(a, 1, MemoryPurpose::weights);
  arena.deallocate(c, 3 * kMiB, MemoryPurpose::optimizer);
  EXPECT_EQ(arena.bytes_in_use(), 0u);
  EXPECT_EQ(arena.largest_free_block(), arena.capacity());  // everything coalesced back
}

TEST_F(DeviceArenaTest, BestFitReusesTheSmallestHole) {
  DeviceArena arena(64 * kMiB);
  void* a = arena.allocate(8 * kMiB, MemoryPurpose::activations);
  void* gap_big = arena.allocate(4 * kMiB, MemoryPurpose::activations);
  void* b = arena.allocate(1 * kMiB, MemoryPurpose::activations);
  void* gap_small = arena.allocate(2 * kMiB, MemoryPurpose::activations);
  void* c = arena.allocate(1 * kMiB, MemoryPurpose::activations);
  arena.deallocate(gap_big, 4 * kMiB, MemoryPurpose::activations);
  arena.deallocate(gap_small, 2 * kMiB, MemoryPurpose::activations);
  // 2 MiB fits both holes and the tail; best fit takes the 2 MiB hole exactly.
  void* d = arena.allocate(2 * kMiB, MemoryPurpose::activations);
  EXPECT_EQ(d, gap_small);
  // 3 MiB fits only the 4 MiB hole (the tail is larger): it starts where that hole starts.
  void* e = arena.allocate(3 * kMiB, MemoryPurpose::activations);
  EXPECT_EQ(e, gap_big);
  const std::pair<void*, std::size_t> blocks[] = {
      {a, 8 * kMiB}, {b, kMiB}, {c, kMiB}, {d, 2 * kMiB}, {e, 3 * kMiB}};
  for (const auto& [p, n] : blocks) arena.deallocate(p, n, MemoryPurpose::activations);
  EXPECT_EQ(arena.largest_free_block(), arena.capacity());
}

TEST_F(DeviceArenaTest, OutOfMemoryNamesThePurposeAndTheFigures) {
  DeviceArena arena(16 * kMiB);
  void* w = arena.allocate(10 * kMiB, MemoryPurpose::weights);
  try {
    arena.allocate(8 * kMiB, MemoryPurpose::activations);
    FAIL() << "an allocation beyond the arena succeeded";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("device memory: need 8388608 bytes for activations"), std::string::npos)
        << what;
    EXPECT_NE(what.find("10485760 of 16777216 bytes in use"), std::string::npos) << what;
    EXPECT_NE(what.find("weights 10485760"), std::string::npos) << what;
    EXPECT_EQ(e.needed_bytes(), static_cast<long long>(8 * kMiB));
    EXPECT_EQ(e.available_bytes(), static_cast<long long>(6 * kMiB));
  }
  // The failed request left the arena as it was.
  EXPECT_EQ(arena.bytes_in_use(), 10 * kMiB);
  arena.deallocate(w, 10 * kMiB, MemoryPurpose::weights);
}

TEST_F(DeviceArenaTest, TensorsReturnTheirBytes) {
  CudaBackend backend(0, 64 * kMiB);
  const std::int64_t base = backend.arena().ledger().snapshot().total_in_use;  // its own buffers
  {
    Tensor t = backend.empty({1000, 3}, DType::f16, MemoryPurpose::gradients);
    EXPECT_EQ(backend.arena().ledger().snapshot().total_in_use, base + 6144);
    Tensor pinned =
        Tensor::empty({4096}, DType::f32, backend.staging_allocator(), MemoryPurpose::data);
    EXPECT_EQ(pinned.device(), DeviceKind::cpu);
    EXPECT_EQ(
        backend.staging_allocator().ledger().snapshot().in_use[index_of(MemoryPurpose::data)],
        4096 * 4);
  }
  EXPECT_EQ(backend.arena().ledger().snapshot().total_in_use, base);
}

// The device memory outside the arena (context, libraries; in this process also the other
// tests' arenas) is positive, and tensors allocated in the arena do not change it — not even
// one that takes every byte the backend's own buffers (cuBLAS's workspace, the error flag)
// left free.
TEST_F(DeviceArenaTest, OverheadIsWhatTheArenaDoesNotHold) {
  CudaBackend backend(0, 64 * kMiB);
  const std::int64_t before = backend.device_overhead_bytes();
  EXPECT_GT(before, 0);
  const std::size_t left = backend.arena().largest_free_block();
  ASSERT_GT(left, 0u);
  Tensor t = backend.empty({static_cast<std::int64_t>(left)}, DType::u8,
                           MemoryPurpose::activations);
  EXPECT_EQ(backend.arena().bytes_in_use(), backend.arena().capacity());
  backend.synchronize();
  EXPECT_EQ(backend.device_overhead_bytes(), before);
}

TEST(DeviceArenaBytes, ParsesCountsAndSuffixes) {
  EXPECT_EQ(parse_byte_count("1048576", "X"), std::size_t{1} << 20);
  EXPECT_EQ(parse_byte_count("512M", "X"), std::size_t{512} << 20);
  EXPECT_EQ(parse_byte_count("80G", "X"), std::size_t{80} << 30);
  EXPECT_EQ(parse_byte_count("4k", "X"), std::size_t{4096});
  EXPECT_THROW(parse_byte_count("lots", "PFC_CUDA_ARENA_BYTES"), UsageError);
  EXPECT_THROW(parse_byte_count("12T", "PFC_CUDA_ARENA_BYTES"), UsageError);
}

#else

TEST(DeviceArenaTest, NeedsCuda) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace pfc
