// Class-centre init: N(0, 0.01) keyed by the global element index, so that a shard filled on
// its own equals its rows of the global matrix.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/backend.h"
#include "pfc/class_centre_init.h"

namespace pfc {
namespace {

TEST(ClassCentreInit, ShardsEqualTheirRowsOfTheGlobalMatrix) {
  auto backend = make_backend(BackendKind::cpu);
  const std::int64_t classes = 37, emb = 5;  // odd width: rows start on odd elements
  Tensor global = backend->empty({classes, emb}, DType::f32, MemoryPurpose::weights);
  init_class_centres(*backend, global, 0, 11);
  for (std::int64_t first : {0, 1, 12, 36}) {
    Tensor shard = backend->empty({classes - first, emb}, DType::f32, MemoryPurpose::weights);
    init_class_centres(*backend, shard, first, 11);
    for (std::int64_t i = 0; i < shard.numel(); ++i)
      ASSERT_EQ(shard.data<float>()[i], global.data<float>()[first * emb + i]) << first << " " << i;
  }
  for (std::int64_t i = 0; i < global.numel(); ++i)
    ASSERT_EQ(global.data<float>()[i], class_centre_init_value(11, i));
}

TEST(ClassCentreInit, IsNormalWithStdOneHundredth) {
  const int n = 200000;
  double sum = 0.0, sq = 0.0, within_one_sd = 0.0;
  for (int i = 0; i < n; ++i) {
    const double v = class_centre_init_value(3, i);
    sum += v;
    sq += v * v;
    if (std::abs(v) < 0.01) within_one_sd += 1.0;
  }
  EXPECT_NEAR(sum / n, 0.0, 1e-4);
  EXPECT_NEAR(std::sqrt(sq / n), 0.01, 1e-4);
  EXPECT_NEAR(within_one_sd / n, 0.6827, 0.005);
  EXPECT_NE(class_centre_init_value(3, 0), class_centre_init_value(4, 0));
}

}  // namespace
}  // namespace pfc
