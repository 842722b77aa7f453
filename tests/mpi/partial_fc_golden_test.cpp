// PartialFc against arcface_torch itself: the golden file's `tiny` cases (sample rate 1, and
// 0.1 with the file's sampled_index injected) give the loss, the embeddings' gradient and the
// class centres' gradient, at any world size. A batch the world does not divide is given
// whole to every rank: the loss and the centres' gradient stay the same, and each copy of an
// embedding gets 1/world of its gradient.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "backend/backend.h"
#include "comm/mpi_comm.h"
#include "io/golden_file.h"
#include "pfc/partial_fc.h"
#include "support/test_paths.h"

namespace pfc {
namespace {

class PartialFcGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PartialFcGoldenTest, MatchesArcfaceTorch) {
  const std::string path = test::golden_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no golden file at " << path;
  h5::quiet_errors();
  const GoldenFile golden(path);
  const std::string group = "tiny", case_name = GetParam();
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
  PartialFc fc(*backend, comm, o);
  fc.set_global_weight(golden.class_centres(net));
  const std::string sampled_path = "/" + group + "/" + case_name + "/sampled_index";
  if (golden.has(sampled_path)) {
    const Tensor index = h5::read_tensor(golden.file_id(), sampled_path, DType::i64);
    fc.inject_sampled_classes(std::vector<std::int64_t>(
        index.data<std::int64_t>(), index.data<std::int64_t>() + index.numel()));
  }

  const Tensor all_embeddings = golden.reference(group, case_name, "embeddings")->values;
  const Tensor all_labels = golden.labels(group);
  const bool split = net.batch % world == 0;
  const std::int64_t rows = split ? net.batch / world : net.batch;
  const std::int64_t first = split ? rank * rows : 0;
  Tensor embeddings = backend->empty({rows, net.embedding_size}, DType::f32, MemoryPurpose::data);
  backend->copy(all_embeddings.rows(first, first + rows), embeddings);
  Tensor labels = Tensor::host({rows}, DType::i64);
  std::copy_n(all_labels.data<std::int64_t>() + first, rows, labels.data<std::int64_t>());

  Tensor embeddings_grad;
  const double loss = fc.forward_backward(embeddings, labels, embeddings_grad, 0);
  EXPECT_NEAR(loss, gc.loss, 1e-5 * gc.loss);

  const GoldenReference want_e = *golden.reference(group, case_name, "embeddings_grad");
  const double share = split ? 1.0 : 1.0 / world;
  double diff = 0.0, norm = 0.0;
  for (std::int64_t i = 0; i < rows * net.embedding_size; ++i) {
    const double w = share * want_e.values.data<float>()[first * net.embedding_size + i];
    const double g = embeddings_grad.data<float>()[i];
    diff += (g - w) * (g - w);
    norm += w * w;
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-4) << "embeddings_grad";

  const Tensor got_w = fc.gather_global_weight_grad();
  const GoldenReference want_w = *golden.reference(group, case_name, "pfc.weight");
  diff = norm = 0.0;
  for (std::int64_t i = 0; i < want_w.values.numel(); ++i) {
    const double w = want_w.values.data<float>()[i];
    const double g = got_w.data<float>()[i * want_w.stride];
    diff += (g - w) * (g - w);
    norm += w * w;
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-4) << "pfc.weight gradient (sampled elements)";
  double l2 = 0.0;
  for (std::int64_t i = 0; i < got_w.numel(); ++i)
    l2 += static_cast<double>(got_w.data<float>()[i]) * got_w.data<float>()[i];
  EXPECT_NEAR(std::sqrt(l2), want_w.l2, 1e-4 * want_w.l2) << "pfc.weight gradient L2";
}

INSTANTIATE_TEST_SUITE_P(Tiny, PartialFcGoldenTest,
                         ::testing::Values("arcface_sr1", "arcface_sr0.1"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

}  // namespace
}  // namespace pfc
