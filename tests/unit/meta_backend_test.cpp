// The meta backend: tensors with a shape and no storage, counted in the ledger as the planned
// backend's allocator counts them; reads that give zeros, a finite check that says finite; and
// the arithmetic it counts, against hand counts for small shapes.
#include <gtest/gtest.h>

#include "backend/meta/meta_backend.h"
#include "core/error.h"

namespace pfc {
namespace {

TEST(MetaBackend, TensorsHaveAShapeAndNoValues) {
  MetaBackend meta(BackendKind::cuda);
  Tensor a = meta.empty({3, 5}, DType::f32, MemoryPurpose::weights);
  Tensor b = meta.empty({3, 5}, DType::f32, MemoryPurpose::weights);
  EXPECT_EQ(a.device(), DeviceKind::meta);
  EXPECT_EQ(a.bytes(), 60u);
  EXPECT_NE(a.raw(), b.raw()) << "two live meta tensors share an address";
  EXPECT_THROW(a.data<float>(), Error);
  // Views of a meta tensor are meta tensors at their own offsets.
  EXPECT_EQ(static_cast<const char*>(a.rows(1, 3).raw()) - static_cast<const char*>(a.raw()), 20);
}

TEST(MetaBackend, TheLedgerCountsAsThePlannedAllocator) {
  MetaBackend for_cpu(BackendKind::cpu), for_cuda(BackendKind::cuda);
  {
    Tensor x = for_cpu.empty({10}, DType::f32, MemoryPurpose::activations);
    Tensor y = for_cuda.empty({10}, DType::f32, MemoryPurpose::activations);
    Tensor none = for_cuda.empty({0}, DType::f32, MemoryPurpose::activations);
    // The CPU ledger counts the bytes asked for; the CUDA arena its 256-byte blocks.
    EXPECT_EQ(for_cpu.allocator().ledger().snapshot().total_in_use, 40);
    EXPECT_EQ(for_cuda.allocator().ledger().snapshot().total_in_use, 256);
  }
  EXPECT_EQ(for_cpu.allocator().ledger().snapshot().total_in_use, 0);
  EXPECT_EQ(for_cuda.allocator().ledger().snapshot().total_peak, 256);
  // A plan may be of anything, but not of more than 2^63 bytes.
  EXPECT_THROW(for_cuda.empty({std::int64_t{1} << 40, std::int64_t{1} << 22}, DType::f32,
                              MemoryPurpose::weights),
               Error);
}

TEST(MetaBackend, TheAllocationPolicyIsThePlannedBackends) {
  EXPECT_EQ(MetaBackend(BackendKind::cuda).allocation_policy().activations(true), DType::f16);
  EXPECT_EQ(MetaBackend(BackendKind::cpu).allocation_policy().activations(true), DType::f32);
  EXPECT_EQ(MetaBackend(BackendKind::cuda).allocation_policy().activations(false), DType::f32);
  EXPECT_EQ(MetaBackend(BackendKind::cuda).name(), "meta (plans cuda)");
}

TEST(MetaBackend, ReadsGiveZerosAndTheChecksPass) {
  MetaBackend meta(BackendKind::cpu);
  Tensor x = meta.empty({4}, DType::f32, MemoryPurpose::weights);
  Tensor host = Tensor::host({4}, DType::f32);
  for (int i = 0; i < 4; ++i) host.data<float>()[i] = 7.0f;
  meta.copy(host, x);
  const Tensor back = meta.to_host(x);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back.data<float>()[i], 0.0f);
  EXPECT_TRUE(meta.all_finite(x));
  EXPECT_EQ(meta.sum_of_squares(x), 0.0);
  // Host to host is a real copy.
  Tensor other = Tensor::host({4}, DType::f32);
  meta.copy(host, other);
  EXPECT_EQ(other.data<float>()[3], 7.0f);
}

TEST(MetaBackend, ConvolutionsCountTwoFlopsPerMultiplyAdd) {
  MetaBackend meta(BackendKind::cuda);
  Conv2dGeometry g;
  g.batch = 2;
  g.in_h = g.in_w = 5;
  g.in_channels = 3;
  g.out_channels = 4;
  g.kernel = 3;
  g.stride = 2;
  g.pad = 1;  // 5x5 -> 3x3
  Tensor x = meta.empty(g.input_shape(), DType::f16, MemoryPurpose::activations);
  Tensor w = meta.empty(g.filter_shape(), DType::f16, MemoryPurpose::weights);
  Tensor y = meta.empty(g.output_shape(), DType::f16, MemoryPurpose::activations);
  meta.conv2d_forward(g, x, w, y);
  meta.conv2d_backward_data(g, y, w, x);
  meta.conv2d_backward_filter(g, x, y, w);
  // Each output element (2 images x 3 x 3 pixels x 4 channels = 72) takes 3 x 3 x 3 = 27
  // multiply-adds, in every direction.
  const double flops = 2.0 * 72 * 27;
  for (const char* op : {"conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter"}) {
    const Work& work = meta.tally().by_primitive().at(op);
    EXPECT_EQ(work.calls, 1) << op;
    EXPECT_EQ(work.tensor_flops, flops) << op;  // f16: tensor cores
    EXPECT_EQ(work.other_flops, 0) << op;
  }
  // Bytes: x 2*5*5*3, w 4*3*3*3, y 2*3*3*4 elements of 2 bytes.
  const Work& fwd = meta.tally().by_primitive().at("conv2d_forward");
  EXPECT_EQ(fwd.bytes_read, 2.0 * (150 + 108));
  EXPECT_EQ(fwd.bytes_written, 2.0 * 72);
}

TEST(MetaBackend, GroupedConvolutionsCountTheirGroupsInputsOnly) {
  MetaBackend meta(BackendKind::cpu);
  // 4 -> 6 channels in 2 groups, then a depthwise 3x3 of the 6: an output channel reads
  // its own group's 2 inputs, or its one channel.
  Conv2dGeometry g;
  g.batch = 2;
  g.in_h = g.in_w = 5;
  g.in_channels = 4;
  g.out_channels = 6;
  g.groups = 2;
  g.kernel = 3;
  g.stride = 2;
  g.pad = 1;  // 5x5 -> 3x3
  Conv2dGeometry depthwise = g;
  depthwise.in_h = depthwise.in_w = 3;
  depthwise.in_channels = depthwise.groups = 6;
  depthwise.stride = 1;  // 3x3 -> 3x3
  for (const Conv2dGeometry& c : {g, depthwise}) {
    Tensor x = meta.empty(c.input_shape(), DType::f64, MemoryPurpose::activations);
    Tensor w = meta.empty(c.filter_shape(), DType::f64, MemoryPurpose::weights);
    Tensor y = meta.empty(c.output_shape(), DType::f64, MemoryPurpose::activations);
    meta.conv2d_forward(c, x, w, y);
    meta.conv2d_backward_data(c, y, w, x);
    meta.conv2d_backward_filter(c, x, y, w);
  }
  // 2 images x 3 x 3 pixels x 6 channels = 108 outputs of 3 x 3 x 2 = 18 multiply-adds, then
  // 108 of 3 x 3 x 1 = 9.
  const double flops = 2.0 * 108 * 18 + 2.0 * 108 * 9;
  for (const char* op : {"conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter"}) {
    const Work& work = meta.tally().by_primitive().at(op);
    EXPECT_EQ(work.calls, 2) << op;
    EXPECT_EQ(work.other_flops, flops) << op;  // f64: no tensor cores
    EXPECT_EQ(work.tensor_flops, 0) << op;
  }
  // Bytes of the filters [6, 3, 3, 2] and [6, 3, 3, 1]: x 2*5*5*4 and 2*3*3*6, w 108 and 54,
  // y twice 2*3*3*6 elements of 8 bytes.
  const Work& fwd = meta.tally().by_primitive().at("conv2d_forward");
  EXPECT_EQ(fwd.bytes_read, 8.0 * (200 + 108 + 108 + 54));
  EXPECT_EQ(fwd.bytes_written, 8.0 * (108 + 108));
}

TEST(MetaBackend, GemmsCountTwoFlopsPerMultiplyAddAndReadCWhenBetaKeepsIt) {
  MetaBackend meta(BackendKind::cuda);
  // c [3, 4] = a^T [3, 5] * b [5, 4], f32: not on tensor cores.
  Tensor a = meta.empty({5, 3}, DType::f32, MemoryPurpose::activations);
  Tensor b = meta.empty({5, 4}, DType::f32, MemoryPurpose::activations);
  Tensor c = meta.empty({3, 4}, DType::f32, MemoryPurpose::activations);
  meta.gemm(true, false, 1.0, a, b, 0.0, c);
  Work w = meta.tally().by_primitive().at("gemm");
  EXPECT_EQ(w.other_flops, 2.0 * 3 * 4 * 5);
  EXPECT_EQ(w.tensor_flops, 0);
  EXPECT_EQ(w.bytes_read, 4.0 * (15 + 20));
  EXPECT_EQ(w.bytes_written, 4.0 * 12);
  const ArithmeticTally before = meta.tally();
  Tensor ah = meta.empty({3, 5}, DType::f16, MemoryPurpose::activations);
  Tensor bh = meta.empty({4, 5}, DType::f16, MemoryPurpose::activations);
  meta.gemm(false, true, 1.0, ah, bh, 1.0, c);
  w = meta.tally().since(before).by_primitive().at("gemm");
  EXPECT_EQ(w.calls, 1);
  EXPECT_EQ(w.tensor_flops, 2.0 * 3 * 4 * 5);
  EXPECT_EQ(w.bytes_read, 2.0 * (15 + 20) + 4.0 * 12);
}

TEST(MetaBackend, ElementwiseWorkIsPerElement) {
  MetaBackend meta(BackendKind::cpu);
  Tensor x = meta.empty({6, 4}, DType::f32, MemoryPurpose::activations);
  Tensor y = meta.empty({6, 4}, DType::f32, MemoryPurpose::activations);
  meta.add(x, y, y);
  meta.axpy(2.0, x, y);
  const auto& by = meta.tally().by_primitive();
  EXPECT_EQ(by.at("add").other_flops, 24);
  EXPECT_EQ(by.at("axpy").other_flops, 48);
  EXPECT_EQ(by.at("axpy").bytes_read, 2 * 96);
  EXPECT_EQ(meta.tally().total().calls, 2);
}

// AdamW reads w, g and both moments and writes w and the moments; by rows, only the rows the
// gradient has. The filter reads the cosines and writes them and the u8 mask.
TEST(MetaBackend, AdamWAndTheFilterCountTheirStreams) {
  MetaBackend meta(BackendKind::cpu);
  const auto f32 = [&](const Shape& s) {
    return meta.empty(s, DType::f32, MemoryPurpose::optimizer);
  };
  Tensor w = f32({10, 4}), g = f32({10, 4}), m = f32({10, 4}), v = f32({10, 4});
  meta.adamw_update(w, g, m, v, AdamWParams{});
  Tensor rows = f32({3, 4});
  Tensor index = meta.empty({3}, DType::i64, MemoryPurpose::workspace);
  meta.adamw_update_rows(w, m, v, index, rows, AdamWParams{});
  Tensor cos = f32({2, 5});
  Tensor labels = meta.empty({2}, DType::i64, MemoryPurpose::workspace);
  Tensor keep = meta.empty({2, 5}, DType::u8, MemoryPurpose::activations);
  meta.interclass_filter(cos, labels, 0.1, keep);
  meta.interclass_filter_backward(cos, keep);
  const auto& by = meta.tally().by_primitive();
  EXPECT_EQ(by.at("adamw_update").bytes_read, 4 * 160);
  EXPECT_EQ(by.at("adamw_update").bytes_written, 3 * 160);
  EXPECT_EQ(by.at("adamw_update_rows").bytes_written, 3 * 48);
  EXPECT_EQ(by.at("adamw_update_rows").bytes_read, 48 + 24 + 3 * 48);
  EXPECT_EQ(by.at("interclass_filter").bytes_written, 40 + 10);
  EXPECT_EQ(by.at("interclass_filter_backward").bytes_read, 40 + 10);
  AdamWParams bad;
  bad.step = 0;
  EXPECT_THROW(meta.adamw_update(w, g, m, v, bad), Error);
}

// The dense update with a sparse gradient streams the whole table (w and its moments, read and
// written) and the gradient's rows; the exact margin reads and writes one element per row.
TEST(MetaBackend, SparseGradientUpdatesStreamTheWholeTable) {
  MetaBackend meta(BackendKind::cpu);
  const auto f32 = [&](const Shape& s) {
    return meta.empty(s, DType::f32, MemoryPurpose::optimizer);
  };
  Tensor w = f32({10, 4}), m = f32({10, 4}), v = f32({10, 4}), rows = f32({3, 4});
  Tensor index = meta.empty({3}, DType::i64, MemoryPurpose::workspace);
  meta.sgd_update_sparse_grad(w, m, index, rows, 0.1, 0.9, 5e-4);
  meta.adamw_update_sparse_grad(w, m, v, index, rows, AdamWParams{});
  Tensor cos = f32({2, 5}), factor = f32({2});
  Tensor labels = meta.empty({2}, DType::i64, MemoryPurpose::workspace);
  meta.margin_gradient_factor(cos, labels, MarginParams{}, factor);
  meta.scale_target_column(cos, labels, factor);
  const auto& by = meta.tally().by_primitive();
  EXPECT_EQ(by.at("sgd_update_sparse_grad").bytes_read, 2 * 160 + 48 + 24);
  EXPECT_EQ(by.at("sgd_update_sparse_grad").bytes_written, 2 * 160);
  EXPECT_EQ(by.at("sgd_update_sparse_grad").other_flops, 6 * 40);
  EXPECT_EQ(by.at("adamw_update_sparse_grad").bytes_read, 3 * 160 + 48 + 24);
  EXPECT_EQ(by.at("adamw_update_sparse_grad").bytes_written, 3 * 160);
  EXPECT_EQ(by.at("margin_gradient_factor").bytes_read, 16 + 8);
  EXPECT_EQ(by.at("margin_gradient_factor").bytes_written, 8);
  EXPECT_EQ(by.at("scale_target_column").bytes_written, 8);
}

}  // namespace
}  // namespace pfc
