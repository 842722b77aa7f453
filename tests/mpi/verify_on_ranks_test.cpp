// verify_on_ranks splits a verification file's images over the ranks and gets, on every rank,
// exactly (bit for bit) what one process alone computes.
#include <gtest/gtest.h>
#include <mpi.h>

#include "backend/cpu/cpu_backend.h"
#include "comm/mpi_comm.h"
#include "eval/verify_on_ranks.h"
#include "model/iresnet.h"
#include "mpi/checkpoint_fixture.h"
#include "support/verification_bins.h"

namespace pfc {
namespace {

using namespace pfc::test;

TEST(VerifyOnRanks, EveryRankCountGivesWhatOneProcessGives) {
  const auto dir = shared_scratch("verify_on_ranks");
  const std::string path = (dir / "pairs.bin").string();
  // 23 pairs in batches of 4: 12 batches, uneven over 2 and 3 ranks, a short last one.
  if (world_rank() == 0) write_verification_bin(path, face_pairs(23));
  MPI_Barrier(MPI_COMM_WORLD);
  const auto bin = std::make_shared<const VerificationBin>(path);

  CpuBackend backend;
  IResNetOptions o;
  o.layers = {1, 1, 1, 1};
  o.widths = {8, 8, 16, 16};
  o.embedding_size = 16;
  IResNet model(backend, o);
  model.initialize(11);

  MpiComm world;
  const VerificationResult shared = verify_on_ranks(model, bin, world, 4);
  MpiComm self(MPI_COMM_SELF);
  const VerificationResult alone = verify_on_ranks(model, bin, self, 4);
  EXPECT_EQ(shared.pairs, 23);
  EXPECT_EQ(shared.xnorm, alone.xnorm);
  EXPECT_EQ(shared.accuracy, alone.accuracy);
  EXPECT_EQ(shared.accuracy_std, alone.accuracy_std);
  EXPECT_EQ(shared.accuracy_noflip, alone.accuracy_noflip);
  EXPECT_EQ(shared.val, alone.val);
  EXPECT_EQ(shared.far, alone.far);
  EXPECT_GT(shared.xnorm, 0.0);
}

}  // namespace
}  // namespace pfc
