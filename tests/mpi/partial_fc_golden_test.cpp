// PartialFc against arcface_torch in float64: the golden file's `tiny` and `r50` cases (sample
// rate 1, and 0.1 with the file's sampled_index injected) give the exact loss, embeddings'
// gradient and class centres' gradient, at any world size. In f64 every one is within 1e-10;
// in f32 within max(1e-4, 4 x arcface_torch's own fp32 error). A batch the world does not
// divide is given whole to every rank: the loss and the centres' gradient stay the same, and
// each copy of an embedding gets 1/world of its gradient.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <tuple>

#include "app/golden_backbone.h"
#include "backend/backend.h"
#include "comm/mpi_comm.h"
#include "io/golden_file.h"
#include "pfc/partial_fc.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

// The bound of `pfc golden`'s rule for the element type.
double bound(DType dtype, const TorchFp32Error& torch) {
  if (dtype == DType::f64) return 1e-10;
  return std::max(1e-4, 4.0 * std::max(torch.cpu.value_or(0.0), torch.gpu.value_or(0.0)));
}

using GoldenParam = std::tuple<std::string, DType>;  // "group/case", element type

class PartialFcGoldenTest : public ::testing::TestWithParam<GoldenParam> {};

TEST_P(PartialFcGoldenTest, MatchesArcfaceTorchInFloat64) {
  const std::string path = test::golden_path();
  ASSERT_TRUE(std::filesystem::exists(path)) << "no golden file at " << path;
  h5::quiet_errors();
  const GoldenFile golden(path);
  ASSERT_EQ(golden.precision(), "f64") << path << " is not the f64 reference file";
  const auto [spec, dtype] = GetParam();
  const std::string group = spec.substr(0, spec.find('/'));
  const std::string case_name = spec.substr(group.size() + 1);
  const GoldenNetwork net = golden.network(group);
  const GoldenCase gc = golden.golden_case(group, case_name);

  auto backend = make_backend(BackendKind::cpu);
  MpiComm comm;
  const int world = comm.world_size(), rank = comm.rank();
  PartialFcOptions o;
  o.num_classes = net.num_classes;
  o.embedding_size = net.embedding_size;
  o.sample_rate = gc.sample_rate;
  o.margin = MarginParams{gc.m1, gc.m2, gc.m3, net.scale_s};
  o.method = PfcMethod::pfc;
  o.dtype = dtype;
  o.gemm_operands = dtype;
  PartialFc fc(*backend, comm, o);
  fc.set_global_weight(golden.class_centres(net));
  const std::string sampled_path = "/" + group + "/" + case_name + "/sampled_index";
  if (golden.has(sampled_path)) {
    const Tensor index = h5::read_tensor(golden.file_id(), sampled_path, DType::i64);
    fc.inject_sampled_classes(std::vector<std::int64_t>(
        index.data<std::int64_t>(), index.data<std::int64_t>() + index.numel()));
  }

  const GoldenReference want_emb = *golden.reference(group, case_name, "embeddings");
  const Tensor all_labels = golden.labels(group);
  const bool split = net.batch % world == 0;
  const std::int64_t rows = split ? net.batch / world : net.batch;
  const std::int64_t first = split ? rank * rows : 0;
  Tensor embeddings = backend->empty({rows, net.embedding_size}, dtype, MemoryPurpose::data);
  backend->copy_cast(want_emb.values.rows(first, first + rows), embeddings);
  Tensor labels = Tensor::host({rows}, DType::i64);
  std::copy_n(all_labels.data<std::int64_t>() + first, rows, labels.data<std::int64_t>());

  Tensor embeddings_grad;
  const double loss = fc.forward_backward(embeddings, labels, embeddings_grad, 0);
  EXPECT_LE(std::fabs(loss - gc.loss) / gc.loss, bound(dtype, gc.torch_loss))
      << "loss " << loss << " vs " << gc.loss;

  const GoldenReference want_e = *golden.reference(group, case_name, "embeddings_grad");
  const Tensor got_e = to_host_f64(*backend, embeddings_grad);
  const double share = split ? 1.0 : 1.0 / world;
  double diff = 0.0, norm = 0.0;
  for (std::int64_t i = 0; i < rows * net.embedding_size; ++i) {
    const double w = share * want_e.values.data<double>()[first * net.embedding_size + i];
    const double g = got_e.data<double>()[i];
    diff += (g - w) * (g - w);
    norm += w * w;
  }
  EXPECT_LE(std::sqrt(diff / norm), bound(dtype, want_e.torch)) << "embeddings_grad";

  const Tensor got_w = to_host_f64(*backend, fc.gather_global_weight_grad());
  const GoldenReference want_w = *golden.reference(group, case_name, "pfc.weight");
  diff = norm = 0.0;
  for (std::int64_t i = 0; i < want_w.values.numel(); ++i) {
    const double w = want_w.values.data<double>()[i];
    const double g = got_w.data<double>()[i * want_w.stride];
    diff += (g - w) * (g - w);
    norm += w * w;
  }
  EXPECT_LE(std::sqrt(diff / norm), bound(dtype, want_w.torch))
      << "pfc.weight gradient (every " << want_w.stride << "th element)";
  double l2 = 0.0;
  for (std::int64_t i = 0; i < got_w.numel(); ++i)
    l2 += got_w.data<double>()[i] * got_w.data<double>()[i];
  EXPECT_LE(std::fabs(std::sqrt(l2) - want_w.l2) / want_w.l2, bound(dtype, want_w.torch))
      << "pfc.weight gradient L2";
}

INSTANTIATE_TEST_SUITE_P(
    TinyAndR50, PartialFcGoldenTest,
    ::testing::Combine(::testing::Values("tiny/arcface_sr1", "tiny/arcface_sr0.1",
                                         "r50/arcface_sr1"),
                       ::testing::Values(DType::f64, DType::f32)),
    [](const auto& info) {
      std::string name = std::get<0>(info.param) + "_" +
                         std::string(dtype_name(std::get<1>(info.param)));
      std::replace_if(name.begin(), name.end(), [](char c) { return c == '.' || c == '/'; }, '_');
      return name;
    });

}  // namespace
}  // namespace pfc
