// The libraries' workspaces (backend/cuda/workspace_policy.h): the policy's arithmetic,
// one workspace shared by every plan and counted in the ledger as `workspace`, no allocation
// once a plan exists, and an algorithm that fits when the arena is short. The GPU cases use a
// backend of their own, so that its ledger sees nothing but them.
#include <gtest/gtest.h>

#include "gpu_test_support.h"

#ifdef PFC_HAVE_CUDA
#include "backend/cuda/workspace_policy.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/device_arena.h"
#endif

namespace pfc::test {
namespace {

#ifdef PFC_HAVE_CUDA

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(ConvWorkspacePolicy, GrowsByAQuarterOfTheFreeBlockUpToTheCap) {
  using cuda::conv_workspace_limit;
  using cuda::kConvWorkspaceCapBytes;
  EXPECT_EQ(conv_workspace_limit(0, 400 * kMiB), 100 * kMiB);
  EXPECT_EQ(conv_workspace_limit(30 * kMiB, 40 * kMiB), 40 * kMiB);
  EXPECT_EQ(conv_workspace_limit(0, std::size_t{64} << 30), kConvWorkspaceCapBytes);
  // What is held stays usable however full the arena is.
  EXPECT_EQ(conv_workspace_limit(200 * kMiB, 0), 200 * kMiB);
  EXPECT_EQ(conv_workspace_limit(0, 0), 0u);
}

std::int64_t workspace_in_use(CudaBackend& b) {
  return b.arena().ledger().snapshot().in_use[static_cast<std::size_t>(MemoryPurpose::workspace)];
}

// The three directions of one convolution on `b`, with inputs from the host.
struct ConvRun {
  Tensor x, w, dy, y, dx, dw;
  ConvRun(CudaBackend& b, const Conv2dGeometry& g, DType dtype) {
    auto upload = [&](const Tensor& host) {
      Tensor d = b.empty(host.shape(), DType::f32, MemoryPurpose::activations);
      b.copy(host, d);
      if (dtype == DType::f32) return d;
      Tensor h = b.empty(host.shape(), dtype, MemoryPurpose::activations);
      b.cast(d, h);
      return h;
    };
    x = upload(x_host(g));
    w = upload(w_host(g));
    dy = upload(dy_host(g));
    y = b.empty(g.output_shape(), dtype, MemoryPurpose::activations);
    dx = b.empty(g.input_shape(), dtype, MemoryPurpose::activations);
    dw = b.empty(g.filter_shape(), dtype, MemoryPurpose::gradients);
  }
  static Tensor x_host(const Conv2dGeometry& g) {
    return random_host(g.input_shape(), -1.0, 1.0, 31);
  }
  static Tensor w_host(const Conv2dGeometry& g) {
    return random_host(g.filter_shape(), -0.2, 0.2, 32);
  }
  static Tensor dy_host(const Conv2dGeometry& g) {
    return random_host(g.output_shape(), -1.0, 1.0, 33);
  }
  void all_directions(CudaBackend& b, const Conv2dGeometry& g) {
    b.conv2d_forward(g, x, w, y);
    b.conv2d_backward_data(g, dy, w, dx);
    b.conv2d_backward_filter(g, x, dy, dw);
    b.synchronize();
  }
};

TEST(GpuConvWorkspace, OneWorkspaceForAllPlansAndNoAllocationOnceAPlanExists) {
  PFC_REQUIRE_GPU();
  CudaBackend b(0, std::size_t{2} << 30);
  // Before any convolution: cuBLAS's workspace and the error flag, as the policy says.
  const std::int64_t own = workspace_in_use(b);
  EXPECT_EQ(own, static_cast<std::int64_t>(cuda::kCublasWorkspaceBytes + DeviceArena::kAlignment));
  std::int64_t held = 0;
  for (const Conv2dGeometry& g :
       {conv_geometry(8, 28, 64, 64, 3, 1, 1), conv_geometry(8, 28, 64, 128, 3, 2, 1),
        conv_geometry(8, 14, 128, 128, 3, 1, 1)}) {
    for (const DType dtype : {DType::f16, DType::f32}) {
      ConvRun run(b, g, dtype);
      run.all_directions(b, g);
      // One buffer whatever the number of plans; it never shrinks below what a plan chose.
      const std::int64_t now = workspace_in_use(b) - own;
      EXPECT_GE(now, held);
      EXPECT_LE(now, static_cast<std::int64_t>(cuda::kConvWorkspaceCapBytes));
      held = now;

      // A cached plan allocates nothing: the peak of a second round is what was already held.
      b.arena().ledger().reset_peak();
      const MemorySnapshot before = b.arena().ledger().snapshot();
      run.all_directions(b, g);
      const MemorySnapshot after = b.arena().ledger().snapshot();
      EXPECT_EQ(after.total_peak, before.total_in_use);
      EXPECT_EQ(after.total_in_use, before.total_in_use);
    }
  }
}

TEST(GpuConvWorkspace, AShortArenaGetsAnAlgorithmThatFits) {
  PFC_REQUIRE_GPU();
  const Conv2dGeometry g = conv_geometry(4, 28, 64, 64, 3, 1, 1);
  CudaBackend b(0, 64 * kMiB);
  const std::int64_t own = workspace_in_use(b);
  ConvRun run(b, g, DType::f32);
  // Leave the convolutions 1 MiB: a quarter of that is all an algorithm may use.
  const std::size_t free_bytes = b.arena().largest_free_block();
  ASSERT_GT(free_bytes, kMiB);
  Tensor filler = b.empty({static_cast<std::int64_t>(free_bytes - kMiB)}, DType::u8,
                          MemoryPurpose::activations);
  run.all_directions(b, g);
  EXPECT_LE(workspace_in_use(b) - own, static_cast<std::int64_t>(kMiB / 4));

  const ConvReference want = cpu_conv_reference(g, ConvRun::x_host(g), ConvRun::w_host(g),
                                                ConvRun::dy_host(g));
  expect_close(b.to_host(run.y), want.y, kTolF32, "forward with a short arena");
  expect_close(b.to_host(run.dx), want.dx, kTolF32, "backward data with a short arena");
  expect_close(b.to_host(run.dw), want.dw, kTolF32, "backward filter with a short arena");
}

#else

TEST(ConvWorkspacePolicy, NeedsCuda) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace pfc::test
