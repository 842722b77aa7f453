// The meta backend checks operands exactly as the backend it plans for: every call of
// support/operand_check_cases.h is accepted by a meta backend planning the CPU backend exactly
// when the CPU backend accepts it, with the same message but for the backend's name; and by one
// planning cuda by the cuda rules (the GPU test holds them against the CUDA backend itself).
#include <gtest/gtest.h>

#include <set>

#include "backend/cpu/cpu_backend.h"
#include "backend/meta/meta_backend.h"
#include "support/operand_check_cases.h"

namespace pfc {
namespace {

// The message without " (file:line: check ...)", the meta backend's name as the planned one's.
std::string comparable(std::string message) {
  const std::string meta = "meta (planning cpu)";
  for (auto at = message.find(meta); at != std::string::npos; at = message.find(meta))
    message.replace(at, meta.size(), "cpu");
  if (const auto at = message.find(" ("); at != std::string::npos) message.resize(at);
  return message;
}

TEST(MetaOperandChecks, AcceptAndRefuseAsTheCpuBackendDoes) {
  for (const test::OperandCase& c : test::operand_check_cases()) {
    CpuBackend cpu;
    MetaBackend meta(BackendKind::cpu);
    std::string cpu_message, meta_message;
    const bool cpu_refuses = test::refuses(cpu, c, &cpu_message);
    const bool meta_refuses = test::refuses(meta, c, &meta_message);
    EXPECT_EQ(cpu_refuses, meta_refuses) << c.name << ": cpu '" << cpu_message << "', meta '"
                                         << meta_message << "'";
    if (cpu_refuses && meta_refuses)
      EXPECT_EQ(comparable(cpu_message), comparable(meta_message)) << c.name;
  }
}

TEST(MetaOperandChecks, PlanningCudaTakesTheCudaRules) {
  // What the CUDA backend refuses of these (f64 compute, bf16 products, f64 parameters and
  // masters, a cast from i32, a mask that is not u8, shapes that do not fit, a batched GEMM
  // past its tensor, stored 16-bit centres beside the wrong moments or gradient) and accepts
  // (f16 compute, f16 GEMM output, mixed f16/f32 operands).
  const std::set<std::string> refused = {
      "copy of another length", "copy f32 -> f16", "cast i32 -> f32", "fill_normal f64",
      "conv f64", "conv bf16 -> f32", "conv bf16 -> bf16", "gemm bf16 -> f32",
      "gemm bf16 -> bf16", "conv with an OIHW filter", "grouped conv with a dense filter",
      "conv of groups that do not divide the channels", "batchnorm f32 x, f64 parameters",
      "batchnorm f64 x, f64 parameters", "batchnorm of one row", "prelu of a vector x",
      "scale f64", "add of two shapes", "gemm with inner dimensions that differ",
      "add_row_vector of a short bias", "l2 of f64 rows, f32 norms", "gather with an i32 index",
      "gather into too many rows", "margin softmax of no global batch",
      "sgd rows of the wrong width", "adamw f64 masters",
      "adamw with a second moment of another shape", "adamw rows of the wrong width",
      "inter-class filter with an f32 mask", "exact margin with a short factor",
      "sparse-gradient sgd of the wrong width",
      "inter-class filter backward of a mask of another shape",
      "batched gemm of f64 attention scores", "batched gemm bf16 -> f32",
      "batched gemm bf16 -> bf16", "batched gemm whose last matrix is outside c",
      "layernorm f64", "layernorm f64 with f32 statistics",
      "scale samples with one factor too few",
      // Stored 16-bit class centres: refused alike on every backend.
      "l2 of stored bf16 rows into bf16", "sgd of stored f16 centres as a vector",
      "sgd of stored f16 centres, an f32 momentum", "sgd of stored bf16 centres, a bf16 gradient",
      "adamw of stored centres with moments of two types"};
  MetaBackend meta(BackendKind::cuda);
  for (const test::OperandCase& c : test::operand_check_cases())
    EXPECT_EQ(test::refuses(meta, c), refused.count(c.name) == 1) << c.name;
}

TEST(MetaOperandChecks, HostTensorsAreNotTheMetaBackendsOperands) {
  MetaBackend meta(BackendKind::cpu);
  Tensor host = Tensor::host({4}, DType::f32);
  try {
    meta.scale(host, 2.0);
    FAIL() << "a host tensor was scaled by the meta backend";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scale: x f32[4] is a host tensor"), std::string::npos)
        << e.what();
  }
  // Copies go between meta and host tensors both ways.
  Tensor meta_tensor = meta.empty({4}, DType::f32, MemoryPurpose::weights);
  EXPECT_NO_THROW(meta.copy(host, meta_tensor));
  EXPECT_NO_THROW(meta.copy(meta_tensor, host));
}

// GEMM dimensions against each backend's BLAS (the meta backend holds shapes without memory):
// the largest plans' class-centre shard, [5.17M, 512] = 2.6e9 elements, is a GEMM operand both
// backends take (OpenBLAS indexes elements in 64 bits, cuBLAS through its 64-bit API); a
// dimension past 2^31 - 1 the CPU backend refuses, naming it and OpenBLAS's 32-bit blasint,
// where cuda takes it.
TEST(MetaOperandChecks, GemmDimensionsAgainstEachBackendsBlas) {
  const std::int64_t shard_rows = 5'170'000, past_int = std::int64_t{1} << 31;
  for (BackendKind kind : {BackendKind::cpu, BackendKind::cuda}) {
    MetaBackend meta(kind);
    const DType type = kind == BackendKind::cuda ? DType::f16 : DType::f32;
    Tensor x = meta.empty({128, 512}, type, MemoryPurpose::activations);
    Tensor centres = meta.empty({shard_rows, 512}, type, MemoryPurpose::weights);
    Tensor logits = meta.empty({128, shard_rows}, DType::f32, MemoryPurpose::activations);
    ASSERT_GT(centres.numel(), past_int);
    EXPECT_NO_THROW(meta.gemm(false, true, 1.0, x, centres, 0.0, logits));
    Tensor dlogits = meta.empty({128, shard_rows}, type, MemoryPurpose::gradients);
    Tensor grad = meta.empty({shard_rows, 512}, DType::f32, MemoryPurpose::gradients);
    EXPECT_NO_THROW(meta.gemm(true, false, 1.0, dlogits, x, 0.0, grad));

    Tensor wide = meta.empty({2, past_int}, type, MemoryPurpose::activations);
    Tensor narrow = meta.empty({3, past_int}, type, MemoryPurpose::activations);
    Tensor out = meta.empty({2, 3}, DType::f32, MemoryPurpose::activations);
    if (kind == BackendKind::cuda) {
      EXPECT_NO_THROW(meta.gemm(false, true, 1.0, wide, narrow, 0.0, out));
      continue;
    }
    try {
      meta.gemm(false, true, 1.0, wide, narrow, 0.0, out);
      FAIL() << "a GEMM with k = 2^31 was taken for the CPU backend";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "gemm: k = 2147483648 exceeds OpenBLAS's 32-bit blasint (meta (planning cpu)'s "
                    "GEMM takes each dimension up to 2147483647)"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace pfc
