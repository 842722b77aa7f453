// PartialFc on 1..4 ranks against a plain double-precision implementation of the margin
// softmax written here (in f32, f16 GEMM operands, and f64, where it must agree to 1e-12;
// inter-class filtering included), against itself on one rank, and across its three methods;
// the sparse SGD update in f32 and f64 and the sparse AdamW update, gradient accumulation over
// micro-batches that sample different rows, the sampler's reproducibility, and bad input
// rejected on every rank alike.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "comm/mpi_comm.h"
#include "core/counter_rng.h"
#include "core/bfloat16.h"
#include "core/float16_bits.h"
#include "core/half.h"
#include "core/stochastic_rounding.h"
#include "pfc/class_centre_init.h"
#include "pfc/partial_fc.h"
#include "pfc/shard_gather.h"

namespace pfc {
namespace {

constexpr MarginParams kArcFace{1.0, 0.5, 0.0, 64.0};
constexpr MarginParams kCosFace{1.0, 0.0, 0.4, 64.0};
constexpr MarginParams kCombined{0.9, 0.4, 0.15, 64.0};

enum class LabelRule { spread, last_rank_only };

// A global batch every rank builds alike; rank r feeds rows [r * batch, (r + 1) * batch).
struct Problem {
  std::int64_t classes = 0, batch = 0, emb = 0;
  int world = 1;
  std::vector<float> embeddings;     // [batch * world, emb]
  std::vector<std::int64_t> labels;  // [batch * world]
  std::int64_t global_batch() const { return batch * world; }
};

Problem make_problem(std::int64_t classes, std::int64_t batch, std::int64_t emb, int world,
                     LabelRule rule, std::uint64_t seed) {
  Problem p{classes, batch, emb, world, {}, {}};
  const std::uint64_t key = stream_key(seed, "test.problem");
  p.embeddings.resize(static_cast<std::size_t>(p.global_batch() * emb));
  for (std::size_t i = 0; i < p.embeddings.size(); ++i)
    p.embeddings[i] = static_cast<float>(2.0 * uniform53(key, i) - 1.0);
  const ShardLayout last = ShardLayout::make(classes, world, world - 1, 1.0);
  for (std::int64_t i = 0; i < p.global_batch(); ++i) {
    const double u = uniform53(key ^ 0x5A5A5A5Aull, static_cast<std::uint64_t>(i));
    p.labels.push_back(rule == LabelRule::spread
                           ? static_cast<std::int64_t>(u * static_cast<double>(classes))
                           : last.class_start + static_cast<std::int64_t>(
                                                    u * static_cast<double>(last.num_local)));
  }
  return p;
}

// ---- the reference: arcface_torch's margin softmax in double, written out plainly ----------

struct Reference {
  double loss = 0.0;
  std::vector<double> embeddings_grad;  // [B, emb]
  std::vector<double> weight_grad;      // [C, emb]; zero for classes not used
};

double target_logit(double c, const MarginParams& m) {
  return std::cos(m.m1 * std::acos(c) + m.m2) - m.m3;
}

// The value an f16 GEMM operand holds: x rounded to f32 (as PartialFc computes it), then
// to f16.
double as_half(double x) { return Half(static_cast<float>(x)).to_float(); }

// used[c]: class c takes part (all of them, or the sampled ones). half_operands: the three
// GEMMs read f16 roundings of the normalised embeddings and centres and of d loss / d cos
// (scaled by f16_cos_grad_scale), as PartialFc's fp16 classifier does. filter > 0:
// arcface_torch's inter-class filtering, a negative whose cosine exceeds it counts as 0.
Reference reference(const Problem& p, const std::vector<float>& weight, const MarginParams& m,
                    const std::vector<bool>& used, bool half_operands = false,
                    double filter = 0.0) {
  const std::int64_t B = p.global_batch(), C = p.classes, E = p.emb;
  const double grad_scale = f16_cos_grad_scale(m.scale, B);
  auto operand = [half_operands](double x) { return half_operands ? as_half(x) : x; };
  auto grad_operand = [&](double g) {
    return half_operands ? as_half(g * grad_scale) / grad_scale : g;
  };
  auto normalise = [E](const float* x, std::vector<double>& out) {
    double sq = 0.0;
    for (std::int64_t j = 0; j < E; ++j) sq += static_cast<double>(x[j]) * x[j];
    const double norm = std::sqrt(sq);
    out.assign(E, 0.0);
    for (std::int64_t j = 0; j < E; ++j) out[j] = x[j] / norm;
    return norm;
  };
  std::vector<std::vector<double>> en(B), wn(C);
  std::vector<double> e_norm(B), w_norm(C);
  for (std::int64_t i = 0; i < B; ++i) e_norm[i] = normalise(&p.embeddings[i * E], en[i]);
  for (std::int64_t c = 0; c < C; ++c) w_norm[c] = normalise(&weight[c * E], wn[c]);
  std::vector<std::vector<double>> en_op(en), wn_op(wn);
  for (auto& row : en_op) std::transform(row.begin(), row.end(), row.begin(), operand);
  for (auto& row : wn_op) std::transform(row.begin(), row.end(), row.begin(), operand);

  Reference r;
  r.embeddings_grad.assign(B * E, 0.0);
  r.weight_grad.assign(C * E, 0.0);
  std::vector<double> d_wn(C * E, 0.0);
  for (std::int64_t i = 0; i < B; ++i) {
    std::vector<double> logit(C, -INFINITY);
    std::vector<bool> filtered(C, false);
    double best = -INFINITY;
    for (std::int64_t c = 0; c < C; ++c) {
      if (!used[c]) continue;
      double cos = 0.0;
      for (std::int64_t j = 0; j < E; ++j) cos += en_op[i][j] * wn_op[c][j];
      cos = std::clamp(cos, -1.0, 1.0);
      filtered[c] = filter > 0.0 && c != p.labels[i] && cos > filter;
      if (filtered[c]) cos = 0.0;
      logit[c] = m.scale * (c == p.labels[i] ? target_logit(cos, m) : cos);
      best = std::max(best, logit[c]);
    }
    double sum = 0.0;
    for (std::int64_t c = 0; c < C; ++c)
      if (used[c]) sum += std::exp(logit[c] - best);
    std::vector<double> d_en(E, 0.0);
    for (std::int64_t c = 0; c < C; ++c) {
      if (!used[c]) continue;
      const double prob = std::exp(logit[c] - best) / sum;
      if (c == p.labels[i]) r.loss -= std::log(std::max(prob, 1e-30)) / B;
      // The margin is straight-through: d loss / d cos = s (p - onehot) / B.
      const double g = filtered[c]
                           ? 0.0
                           : grad_operand(m.scale * (prob - (c == p.labels[i] ? 1.0 : 0.0)) / B);
      for (std::int64_t j = 0; j < E; ++j) {
        d_en[j] += g * wn_op[c][j];
        d_wn[c * E + j] += g * en_op[i][j];
      }
    }
    double dot = 0.0;
    for (std::int64_t j = 0; j < E; ++j) dot += d_en[j] * en[i][j];
    for (std::int64_t j = 0; j < E; ++j)
      r.embeddings_grad[i * E + j] = (d_en[j] - dot * en[i][j]) / e_norm[i];
  }
  for (std::int64_t c = 0; c < C; ++c) {
    if (!used[c]) continue;
    double dot = 0.0;
    for (std::int64_t j = 0; j < E; ++j) dot += d_wn[c * E + j] * wn[c][j];
    for (std::int64_t j = 0; j < E; ++j)
      r.weight_grad[c * E + j] = (d_wn[c * E + j] - dot * wn[c][j]) / w_norm[c];
  }
  return r;
}

// ||a - b|| / ||b||
template <class A, class B>
double relative_error(const A* a, const B* b, std::size_t n) {
  double diff = 0.0, ref = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    ref += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff / std::max(ref, 1e-300));
}

// ---- running PartialFc ---------------------------------------------------------------------

class PartialFcTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> backend = make_backend(BackendKind::cpu);
  MpiComm world_comm{MPI_COMM_WORLD};
  MpiComm self_comm{MPI_COMM_SELF};
  int rank = world_comm.rank();
  int world = world_comm.world_size();

  // dtype: the classifier's element type; gemm_operands f16 (fp16 mode) or dtype.
  PartialFcOptions options(const Problem& p, PfcMethod method, double sample_rate,
                           MarginParams margin = kArcFace, DType gemm_operands = DType::f32,
                           DType dtype = DType::f32) const {
    PartialFcOptions o;
    o.num_classes = p.classes;
    o.embedding_size = p.emb;
    o.sample_rate = sample_rate;
    o.margin = margin;
    o.method = method;
    o.seed = 77;
    o.dtype = dtype;
    o.gemm_operands = gemm_operands == DType::f16 ? gemm_operands : dtype;
    return o;
  }

  struct Outcome {
    double loss = 0.0;
    std::vector<double> embeddings_grad;  // the rows this process fed
    std::vector<double> global_grad;      // [C, emb]
  };

  // Feeds rows [first, first + rows) of the problem's batch at `step`, in the classifier's
  // element type.
  Outcome run(PartialFc& fc, const Problem& p, std::int64_t first, std::int64_t rows,
              std::int64_t step = 0, CentreGradient mode = CentreGradient::replace) {
    Tensor host = Tensor::host({rows, p.emb}, DType::f32);
    std::copy_n(p.embeddings.begin() + first * p.emb, rows * p.emb, host.data<float>());
    Tensor emb = backend->empty({rows, p.emb}, fc.options().dtype, MemoryPurpose::data);
    backend->copy_cast(host, emb);
    Tensor labels = Tensor::host({rows}, DType::i64);
    std::copy_n(p.labels.begin() + first, rows, labels.data<std::int64_t>());
    Tensor grad;
    Outcome out;
    out.loss = fc.forward_backward(emb, labels, grad, step, mode);
    out.embeddings_grad = host_doubles(grad);
    out.global_grad = host_doubles(fc.gather_global_weight_grad());
    return out;
  }
  Outcome run_distributed(PartialFc& fc, const Problem& p, std::int64_t step = 0,
                          CentreGradient mode = CentreGradient::replace) {
    return run(fc, p, rank * p.batch, p.batch, step, mode);
  }

  // The global classes the last forward_backward used on any rank.
  std::vector<bool> used_classes(const PartialFc& fc, Comm& comm) {
    Tensor flags = Tensor::host({fc.options().num_classes}, DType::f64);
    std::fill_n(flags.data<double>(), flags.numel(), 0.0);
    for (std::int64_t i : fc.sampled_index())
      flags.data<double>()[fc.layout().class_start + i] = 1.0;
    comm.all_reduce(flags, ReduceOp::max);
    std::vector<bool> used(flags.numel());
    for (std::int64_t c = 0; c < flags.numel(); ++c) used[c] = flags.data<double>()[c] > 0.0;
    return used;
  }

  static std::vector<float> host_values(const Tensor& t) {
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
  }
  // The values of a host tensor of f32 or f64, as doubles.
  std::vector<double> host_doubles(const Tensor& t) const {
    Tensor d = Tensor::host(t.shape(), DType::f64);
    backend->copy_cast(t, d);
    return std::vector<double>(d.data<double>(), d.data<double>() + d.numel());
  }
};

struct ReferenceCase {
  std::string name;
  PfcMethod method;
  double sample_rate;
  MarginParams margin;
  LabelRule labels;
  DType gemm_operands = DType::f32;
  DType dtype = DType::f32;
  double filter = 0.0;  // interclass_filtering_threshold
};

class PartialFcReferenceTest : public PartialFcTest,
                               public ::testing::WithParamInterface<ReferenceCase> {};

TEST_P(PartialFcReferenceTest, MatchesTheDoublePrecisionReference) {
  const ReferenceCase& c = GetParam();
  // 37 classes: not divisible by 2, 3 or 4.
  const Problem p = make_problem(37, 3, 8, world, c.labels, 5);
  PartialFcOptions o = options(p, c.method, c.sample_rate, c.margin, c.gemm_operands, c.dtype);
  o.interclass_filtering_threshold = c.filter;
  PartialFc fc(*backend, world_comm, o);
  // The centres start from the same f32 values in f64 as in f32.
  std::vector<float> weight;
  for (double w : host_doubles(fc.gather_global_weight())) weight.push_back(static_cast<float>(w));
  const Outcome got = run_distributed(fc, p);
  const Reference want = reference(p, weight, c.margin, used_classes(fc, world_comm),
                                   c.gemm_operands == DType::f16, c.filter);

  // f64 is the reference's own arithmetic: only summation order differs.
  const bool f64 = c.dtype == DType::f64;
  const double loss_tol = f64 ? 1e-13 : 2e-5, grad_tol = f64 ? 1e-12 : 1e-4;
  EXPECT_NEAR(got.loss, want.loss, loss_tol * std::abs(want.loss)) << c.name;
  EXPECT_LT(relative_error(got.embeddings_grad.data(),
                           &want.embeddings_grad[rank * p.batch * p.emb],
                           got.embeddings_grad.size()),
            grad_tol)
      << c.name;
  EXPECT_LT(relative_error(got.global_grad.data(), want.weight_grad.data(),
                           want.weight_grad.size()),
            grad_tol)
      << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    MethodsMarginsLabels, PartialFcReferenceTest,
    ::testing::Values(
        ReferenceCase{"mp_arcface", PfcMethod::mp, 1.0, kArcFace, LabelRule::spread},
        ReferenceCase{"dp_arcface", PfcMethod::dp, 1.0, kArcFace, LabelRule::spread},
        ReferenceCase{"pfc1_arcface", PfcMethod::pfc, 1.0, kArcFace, LabelRule::spread},
        ReferenceCase{"pfc03_arcface", PfcMethod::pfc, 0.3, kArcFace, LabelRule::spread},
        ReferenceCase{"mp_cosface", PfcMethod::mp, 1.0, kCosFace, LabelRule::spread},
        ReferenceCase{"pfc03_cosface", PfcMethod::pfc, 0.3, kCosFace, LabelRule::spread},
        ReferenceCase{"mp_combined", PfcMethod::mp, 1.0, kCombined, LabelRule::spread},
        ReferenceCase{"dp_combined", PfcMethod::dp, 1.0, kCombined, LabelRule::spread},
        ReferenceCase{"mp_one_rank_labels", PfcMethod::mp, 1.0, kArcFace,
                      LabelRule::last_rank_only},
        ReferenceCase{"pfc03_one_rank_labels", PfcMethod::pfc, 0.3, kArcFace,
                      LabelRule::last_rank_only},
        ReferenceCase{"mp_arcface_f16", PfcMethod::mp, 1.0, kArcFace, LabelRule::spread,
                      DType::f16},
        ReferenceCase{"dp_cosface_f16", PfcMethod::dp, 1.0, kCosFace, LabelRule::spread,
                      DType::f16},
        ReferenceCase{"pfc03_combined_f16", PfcMethod::pfc, 0.3, kCombined, LabelRule::spread,
                      DType::f16},
        ReferenceCase{"mp_arcface_f64", PfcMethod::mp, 1.0, kArcFace, LabelRule::spread,
                      DType::f64, DType::f64},
        ReferenceCase{"dp_cosface_f64", PfcMethod::dp, 1.0, kCosFace, LabelRule::spread,
                      DType::f64, DType::f64},
        ReferenceCase{"pfc03_combined_f64", PfcMethod::pfc, 0.3, kCombined, LabelRule::spread,
                      DType::f64, DType::f64},
        ReferenceCase{"pfc03_one_rank_labels_f64", PfcMethod::pfc, 0.3, kArcFace,
                      LabelRule::last_rank_only, DType::f64, DType::f64},
        // Filtering at 0.2 drops about 40 % of the negatives of these random cosines.
        ReferenceCase{"mp_arcface_filter", PfcMethod::mp, 1.0, kArcFace, LabelRule::spread,
                      DType::f32, DType::f32, 0.2},
        ReferenceCase{"dp_cosface_filter", PfcMethod::dp, 1.0, kCosFace, LabelRule::spread,
                      DType::f32, DType::f32, 0.2},
        ReferenceCase{"pfc03_arcface_filter", PfcMethod::pfc, 0.3, kArcFace, LabelRule::spread,
                      DType::f32, DType::f32, 0.2},
        ReferenceCase{"mp_filter_one_rank_labels", PfcMethod::mp, 1.0, kArcFace,
                      LabelRule::last_rank_only, DType::f32, DType::f32, 0.2},
        ReferenceCase{"mp_arcface_filter_f16", PfcMethod::mp, 1.0, kArcFace, LabelRule::spread,
                      DType::f16, DType::f32, 0.2},
        ReferenceCase{"pfc03_arcface_filter_f64", PfcMethod::pfc, 0.3, kArcFace,
                      LabelRule::spread, DType::f64, DType::f64, 0.2}),
    [](const auto& info) { return info.param.name; });

// Three classes on up to four ranks: a rank may hold no class at all, and at sample rate 0.5
// a one-class shard samples its positives only.
TEST_F(PartialFcTest, FewerClassesThanRanks) {
  const Problem p = make_problem(3, 2, 5, world, LabelRule::spread, 4);
  for (auto [method, rate] : {std::pair{PfcMethod::mp, 1.0}, std::pair{PfcMethod::pfc, 0.5},
                              std::pair{PfcMethod::dp, 1.0}}) {
    PartialFc fc(*backend, world_comm, options(p, method, rate, kCosFace));
    const std::vector<float> weight = host_values(fc.gather_global_weight());
    const Outcome got = run_distributed(fc, p);
    const Reference want = reference(p, weight, kCosFace, used_classes(fc, world_comm));
    const std::string name(pfc_method_name(method));
    EXPECT_NEAR(got.loss, want.loss, 2e-5 * std::abs(want.loss)) << name;
    EXPECT_LT(relative_error(got.embeddings_grad.data(),
                             &want.embeddings_grad[rank * p.batch * p.emb],
                             got.embeddings_grad.size()),
              1e-4)
        << name;
    EXPECT_LT(relative_error(got.global_grad.data(), want.weight_grad.data(),
                             want.weight_grad.size()),
              1e-4)
        << name;
    fc.step(0.1);
  }
}

TEST_F(PartialFcTest, InitialCentresAreTheSameGlobalMatrixOnAnyWorld) {
  const Problem p = make_problem(37, 2, 6, world, LabelRule::spread, 1);
  for (PfcMethod m : {PfcMethod::mp, PfcMethod::pfc, PfcMethod::dp}) {
    PartialFc fc(*backend, world_comm, options(p, m, 0.5));
    const Tensor global = fc.gather_global_weight();
    ASSERT_EQ(global.shape(), (Shape{37, 6}));
    for (std::int64_t i = 0; i < global.numel(); ++i)
      ASSERT_EQ(global.data<float>()[i], class_centre_init_value(77, i)) << "element " << i;
  }
}

TEST_F(PartialFcTest, SetGlobalWeightTakesThisRanksRows) {
  const Problem p = make_problem(37, 2, 6, world, LabelRule::spread, 1);
  PartialFc fc(*backend, world_comm, options(p, PfcMethod::pfc, 0.1));
  Tensor global = Tensor::host({37, 6}, DType::f32);
  for (std::int64_t i = 0; i < global.numel(); ++i) global.data<float>()[i] = static_cast<float>(i);
  fc.set_global_weight(global);
  EXPECT_EQ(fc.weight().data<float>()[0], static_cast<float>(fc.layout().class_start * 6));
  EXPECT_EQ(host_values(fc.gather_global_weight()), host_values(global));
}

struct WorldCase {
  std::string name;
  PfcMethod method;
  double sample_rate;
  bool inject;
  LabelRule labels;
  DType dtype = DType::f32;
  OptimizerKind optimizer = OptimizerKind::sgd;
};

class PartialFcWorldTest : public PartialFcTest,
                           public ::testing::WithParamInterface<WorldCase> {};

// K ranks give what one rank gives on the whole global batch: loss, the embeddings'
// gradient, the global centre gradient, and the centres after each of two steps. (Sampled
// runs inject their classes: different worlds draw different negatives.)
TEST_P(PartialFcWorldTest, KRanksEqualOneRank) {
  const WorldCase& c = GetParam();
  const Problem p = make_problem(37, 3, 8, world, c.labels, 9);
  PartialFcOptions o = options(p, c.method, c.sample_rate, kArcFace, c.dtype, c.dtype);
  o.optimizer.kind = c.optimizer;
  PartialFc dist(*backend, world_comm, o);
  PartialFc single(*backend, self_comm, o);
  // f32 agrees to its rounding in another summation order; f64 to f64's.
  const double tol = c.dtype == DType::f64 ? 1e-13 : 1e-5;
  if (c.inject) {
    // Every third class plus the batch's labels, as a golden file's sampled_index holds.
    std::vector<std::int64_t> set;
    for (std::int64_t k = 0; k < p.classes; ++k)
      if (k % 3 == 0 || std::find(p.labels.begin(), p.labels.end(), k) != p.labels.end())
        set.push_back(k);
    dist.inject_sampled_classes(set);
    single.inject_sampled_classes(set);
  }
  for (std::int64_t step = 0; step < 2; ++step) {
    const Outcome d = run_distributed(dist, p, step);
    const Outcome s = run(single, p, 0, p.global_batch(), step);
    EXPECT_NEAR(d.loss, s.loss, tol * std::abs(s.loss)) << c.name << " step " << step;
    EXPECT_LT(relative_error(d.embeddings_grad.data(), &s.embeddings_grad[rank * p.batch * p.emb],
                             d.embeddings_grad.size()),
              tol)
        << c.name << " step " << step;
    EXPECT_LT(relative_error(d.global_grad.data(), s.global_grad.data(), s.global_grad.size()),
              tol)
        << c.name << " step " << step;
    dist.step(0.1);
    single.step(0.1);
    const std::vector<double> wd = host_doubles(dist.gather_global_weight());
    const std::vector<double> ws = host_doubles(single.gather_global_weight());
    EXPECT_LT(relative_error(wd.data(), ws.data(), ws.size()), tol / 10)
        << c.name << " step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Methods, PartialFcWorldTest,
    ::testing::Values(WorldCase{"mp", PfcMethod::mp, 1.0, false, LabelRule::spread},
                      WorldCase{"dp", PfcMethod::dp, 1.0, false, LabelRule::spread},
                      WorldCase{"pfc1", PfcMethod::pfc, 1.0, false, LabelRule::spread},
                      WorldCase{"pfc_injected", PfcMethod::pfc, 0.1, true, LabelRule::spread},
                      WorldCase{"mp_one_rank_labels", PfcMethod::mp, 1.0, false,
                                LabelRule::last_rank_only},
                      WorldCase{"pfc_injected_one_rank_labels", PfcMethod::pfc, 0.1, true,
                                LabelRule::last_rank_only},
                      WorldCase{"mp_f64", PfcMethod::mp, 1.0, false, LabelRule::spread,
                                DType::f64},
                      WorldCase{"dp_f64", PfcMethod::dp, 1.0, false, LabelRule::spread,
                                DType::f64},
                      WorldCase{"pfc_injected_f64", PfcMethod::pfc, 0.1, true, LabelRule::spread,
                                DType::f64},
                      WorldCase{"mp_adamw", PfcMethod::mp, 1.0, false, LabelRule::spread,
                                DType::f32, OptimizerKind::adamw},
                      WorldCase{"dp_adamw", PfcMethod::dp, 1.0, false, LabelRule::spread,
                                DType::f32, OptimizerKind::adamw},
                      WorldCase{"pfc_injected_adamw", PfcMethod::pfc, 0.1, true,
                                LabelRule::spread, DType::f32, OptimizerKind::adamw},
                      WorldCase{"pfc_injected_adamw_f64", PfcMethod::pfc, 0.1, true,
                                LabelRule::spread, DType::f64, OptimizerKind::adamw}),
    [](const auto& info) { return info.param.name; });

// MP, DP and PFC at sample rate 1 are the same function and the same update.
TEST_F(PartialFcTest, MpDpAndPfcAtSampleRateOneAgree) {
  const Problem p = make_problem(37, 3, 8, world, LabelRule::spread, 13);
  PartialFc mp(*backend, world_comm, options(p, PfcMethod::mp, 1.0));
  PartialFc dp(*backend, world_comm, options(p, PfcMethod::dp, 1.0));
  PartialFc pf(*backend, world_comm, options(p, PfcMethod::pfc, 1.0));
  auto global_momentum = [&](PartialFc& fc) {
    const Tensor& m = fc.optimizer_state().moments[0];
    if (fc.options().method == PfcMethod::dp) return host_values(m);
    return host_values(gather_class_shards(*backend, world_comm, fc.layout(), m));
  };
  for (std::int64_t step = 0; step < 2; ++step) {
    const Outcome a = run_distributed(mp, p, step);
    for (PartialFc* other : {&dp, &pf}) {
      const std::string name(pfc_method_name(other->options().method));
      const Outcome b = run_distributed(*other, p, step);
      EXPECT_NEAR(b.loss, a.loss, 1e-5 * std::abs(a.loss)) << name << " step " << step;
      EXPECT_LT(relative_error(b.embeddings_grad.data(), a.embeddings_grad.data(),
                               a.embeddings_grad.size()),
                1e-5)
          << name << " step " << step;
      EXPECT_LT(relative_error(b.global_grad.data(), a.global_grad.data(), a.global_grad.size()),
                1e-5)
          << name << " step " << step;
    }
    for (PartialFc* fc : {&mp, &dp, &pf}) fc->step(0.1);
    const std::vector<float> w = host_values(mp.gather_global_weight());
    const std::vector<float> m = global_momentum(mp);
    for (PartialFc* other : {&dp, &pf}) {
      const std::string name(pfc_method_name(other->options().method));
      const std::vector<float> other_w = host_values(other->gather_global_weight());
      EXPECT_LT(relative_error(other_w.data(), w.data(), w.size()), 1e-6)
          << name << " step " << step;
      EXPECT_LT(relative_error(global_momentum(*other).data(), m.data(), m.size()), 1e-5)
          << name << " step " << step;
    }
  }
}

// PFC updates the sampled rows only, with PyTorch's SGD, in f32 and in f64; every other row
// and its momentum stay bit for bit as they were.
TEST_F(PartialFcTest, SparseUpdateLeavesUnsampledRowsAndMomentumAlone) {
  const Problem p = make_problem(80, 2, 6, world, LabelRule::spread, 21);
  for (DType dtype : {DType::f32, DType::f64}) {
    PartialFc fc(*backend, world_comm, options(p, PfcMethod::pfc, 0.2, kArcFace, dtype, dtype));
    const double lr = 0.1, mu = 0.9, wd = 5e-4;
    const double tol = dtype == DType::f64 ? 1e-15 : 1e-6;
    const std::int64_t emb = p.emb;
    for (std::int64_t step = 0; step < 3; ++step) {
      run_distributed(fc, p, step);
      const Tensor& momentum = fc.optimizer_state().moments[0];
      const std::vector<double> w0 = host_doubles(fc.weight()), m0 = host_doubles(momentum);
      const std::vector<double> g = host_doubles(fc.shard_weight_grad());
      const std::vector<std::int64_t> sampled = fc.sampled_index();
      EXPECT_EQ(static_cast<std::int64_t>(sampled.size()), fc.layout().num_sample);
      fc.step(lr);
      EXPECT_EQ(fc.weight().dtype(), dtype);
      EXPECT_EQ(momentum.dtype(), dtype);
      const std::vector<double> w1 = host_doubles(fc.weight()), m1 = host_doubles(momentum);
      for (std::int64_t row = 0; row < fc.layout().num_local; ++row) {
        const bool used = std::binary_search(sampled.begin(), sampled.end(), row);
        for (std::int64_t j = 0; j < emb; ++j) {
          const std::size_t i = static_cast<std::size_t>(row * emb + j);
          const std::string at = fmt::format("{} row {} step {}", dtype_name(dtype), row, step);
          if (used) {
            const double m = mu * m0[i] + g[i] + wd * w0[i];
            ASSERT_NEAR(m1[i], m, tol * std::max(1.0, std::abs(m))) << at;
            const double w = w0[i] - lr * m;
            ASSERT_NEAR(w1[i], w, tol * std::max(1.0, std::abs(w))) << at;
          } else {
            ASSERT_EQ(w1[i], w0[i]) << "unsampled " << at;
            ASSERT_EQ(m1[i], m0[i]) << "unsampled " << at;
            ASSERT_EQ(g[i], 0.0) << "unsampled " << at;
          }
        }
      }
    }
    EXPECT_THROW(fc.step(lr), Error);  // no new gradient since the last step
  }
}

// An f64 classifier takes f64 embeddings only, and f16 GEMM operands only in f32.
TEST_F(PartialFcTest, F64ClassifierRefusesMixedTypes) {
  const Problem p = make_problem(37, 3, 8, world, LabelRule::spread, 3);
  EXPECT_THROW(PartialFc(*backend, world_comm,
                         options(p, PfcMethod::mp, 1.0, kArcFace, DType::f16, DType::f64)),
               Error);
  PartialFcOptions f16_run = options(p, PfcMethod::mp, 1.0);
  f16_run.dtype = DType::f16;
  EXPECT_THROW(PartialFc(*backend, world_comm, f16_run), Error);
  PartialFc fc(*backend, world_comm, options(p, PfcMethod::mp, 1.0, kArcFace, DType::f64,
                                             DType::f64));
  Tensor labels = Tensor::host({p.batch}, DType::i64);
  std::copy_n(p.labels.begin() + rank * p.batch, p.batch, labels.data<std::int64_t>());
  Tensor f32_embeddings = backend->zeros({p.batch, p.emb}, DType::f32, MemoryPurpose::data);
  Tensor grad;
  EXPECT_THROW(fc.forward_backward(f32_embeddings, labels, grad, 0), Error);
}

// AdamW on the sampled rows: their weights and both moments follow torch.optim.AdamW with the
// table's update count as t; every other row and its moments stay bit for bit as they were.
TEST_F(PartialFcTest, SparseAdamWLeavesUnsampledRowsAndMomentsAlone) {
  const Problem p = make_problem(80, 2, 6, world, LabelRule::spread, 23);
  PartialFcOptions o = options(p, PfcMethod::pfc, 0.2);
  o.optimizer.kind = OptimizerKind::adamw;
  o.optimizer.weight_decay = 0.1;
  PartialFc fc(*backend, world_comm, o);
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1;
  const std::int64_t emb = p.emb;
  OptimizerState& state = fc.optimizer_state();
  for (std::int64_t step = 0; step < 3; ++step) {
    run_distributed(fc, p, step);
    const std::vector<float> w0 = host_values(fc.weight());
    const std::vector<float> m0 = host_values(state.moments[0]);
    const std::vector<float> v0 = host_values(state.moments[1]);
    const std::vector<float> g = host_values(fc.shard_weight_grad());
    const std::vector<std::int64_t> sampled = fc.sampled_index();
    fc.step(lr);
    EXPECT_EQ(state.updates, step + 1);
    const double t = static_cast<double>(step + 1);
    const double step_size = lr / (1.0 - std::pow(b1, t));
    const double bias2_sqrt = std::sqrt(1.0 - std::pow(b2, t));
    const std::vector<float> w1 = host_values(fc.weight());
    const std::vector<float> m1 = host_values(state.moments[0]);
    const std::vector<float> v1 = host_values(state.moments[1]);
    for (std::int64_t row = 0; row < fc.layout().num_local; ++row) {
      const bool used = std::binary_search(sampled.begin(), sampled.end(), row);
      for (std::int64_t j = 0; j < emb; ++j) {
        const std::size_t i = static_cast<std::size_t>(row * emb + j);
        if (used) {
          // Each bound is f32 rounding of the terms summed, which may cancel, with a floor for
          // the subnormal squares of tiny gradients.
          const double m = b1 * m0[i] + (1 - b1) * g[i];
          const double v = b2 * v0[i] + (1 - b2) * g[i] * g[i];
          const double shift = step_size * m / (std::sqrt(v) / bias2_sqrt + eps);
          const double w = w0[i] * (1 - lr * wd) - shift;
          const double m_scale = std::abs(b1 * m0[i]) + std::abs((1 - b1) * g[i]);
          ASSERT_NEAR(m1[i], m, 1e-6 * m_scale + 1e-30) << "row " << row;
          ASSERT_NEAR(v1[i], v, 1e-6 * v + 1e-30) << "row " << row;
          ASSERT_NEAR(w1[i], w, 1e-6 * (std::abs(w0[i]) + std::abs(shift))) << "row " << row;
        } else {
          ASSERT_EQ(w1[i], w0[i]) << "unsampled row " << row << " step " << step;
          ASSERT_EQ(m1[i], m0[i]) << "unsampled row " << row << " step " << step;
          ASSERT_EQ(v1[i], v0[i]) << "unsampled row " << row << " step " << step;
        }
      }
    }
  }
}

// gradient_acc: two micro-batches with their own labels and draws. The step's centre gradient
// is the sum of theirs over the union of the rows they used, and the update moves exactly the
// rows in that union.
// Class centres stored in 16 bits (classifier_storage): they start as the f32 initial values
// rounded to nearest, the same global matrix on any number of ranks; the margin softmax
// computes on their values exactly as on f32 centres holding them (the reference); and a step
// moves each used row as its definition says (read into f32, PyTorch's SGD, each result
// rounded stochastically with the bits of its global element in the update's stream), while
// unused rows and their momentum keep their bits.
TEST_F(PartialFcTest, StoredCentresComputeOnTheirValuesAndStepAsTheirDefinition) {
  const Problem p = make_problem(37, 3, 8, world, LabelRule::spread, 5);
  const double lr = 0.1, mu = 0.9, wd = 5e-4;
  for (DType stored : {DType::f16, DType::bf16}) {
    for (auto [method, rate] : {std::pair{PfcMethod::pfc, 0.5}, std::pair{PfcMethod::mp, 1.0}}) {
      const std::string name = fmt::format("{} {}", dtype_name(stored), pfc_method_name(method));
      PartialFcOptions o = options(p, method, rate);
      o.storage = stored;
      PartialFc fc(*backend, world_comm, o);
      OptimizerState& state = fc.optimizer_state();
      ASSERT_EQ(fc.weight().dtype(), stored) << name;
      ASSERT_EQ(state.moments[0].dtype(), stored) << name;
      const std::vector<double> global = host_doubles(fc.gather_global_weight());
      std::vector<float> weight(global.begin(), global.end());
      for (std::size_t i = 0; i < weight.size(); ++i) {
        const float init = class_centre_init_value(77, i);
        const float rounded = stored == DType::f16 ? Half(init).to_float()
                                                   : BFloat16(init).to_float();
        ASSERT_EQ(weight[i], rounded) << name << " element " << i;
      }

      const Outcome out = run_distributed(fc, p, 0);
      const Reference r = reference(p, weight, kArcFace, used_classes(fc, world_comm));
      EXPECT_NEAR(out.loss, r.loss, 1e-5 * std::fabs(r.loss)) << name;
      EXPECT_LT(relative_error(out.global_grad.data(), r.weight_grad.data(),
                               r.weight_grad.size()), 1e-5)
          << name;

      const Tensor& w = fc.weight();
      const Tensor& m = state.moments[0];
      const Tensor w_host = backend->to_host(w), m_host = backend->to_host(m);
      const std::vector<double> g = host_doubles(fc.shard_weight_grad());
      const std::vector<std::int64_t> used = fc.sampled_index();
      const StochasticRounding rounding = state.rounding();
      fc.step(lr);
      const Tensor w_after = backend->to_host(w), m_after = backend->to_host(m);
      const auto bits = [](const Tensor& t, std::int64_t i) {
        return static_cast<const std::uint16_t*>(t.raw())[i];
      };
      const auto value = [stored](std::uint16_t b) {
        return stored == DType::f16 ? Half::to_float(b) : bf16_bits_to_float(b);
      };
      const auto round = [stored](float v, std::uint32_t b) {
        return stored == DType::f16 ? f16_bits_stochastic(v, b) : bf16_bits_stochastic(v, b);
      };
      EXPECT_EQ(rounding.first_row, fc.layout().class_start) << name;
      const std::uint64_t ws = rounding_stream(rounding.key, RoundedTensor::weight);
      const std::uint64_t ms = rounding_stream(rounding.key, RoundedTensor::first_moment);
      for (std::int64_t row = 0; row < fc.layout().num_local; ++row) {
        const bool moved = std::binary_search(used.begin(), used.end(), row);
        for (std::int64_t j = 0; j < p.emb; ++j) {
          const std::int64_t i = row * p.emb + j;
          if (!moved) {
            ASSERT_EQ(bits(w_after, i), bits(w_host, i)) << name << " unused row " << row;
            ASSERT_EQ(bits(m_after, i), bits(m_host, i)) << name << " unused row " << row;
            continue;
          }
          const auto element = static_cast<std::uint64_t>((fc.layout().class_start + row) *
                                                              p.emb + j);
          const float wf = value(bits(w_host, i));
          const float gi = static_cast<float>(g[i]) + static_cast<float>(wd) * wf;
          const float mi = static_cast<float>(mu) * value(bits(m_host, i)) + gi;
          ASSERT_EQ(bits(m_after, i), round(mi, rounding_bits(ms, element))) << name << " " << i;
          ASSERT_EQ(bits(w_after, i),
                    round(wf - static_cast<float>(lr) * mi, rounding_bits(ws, element)))
              << name << " " << i;
        }
      }
      EXPECT_NE(state.rounding().key, rounding.key) << "each update draws anew";
    }
  }
}

TEST_F(PartialFcTest, AccumulatedGradientCoversTheRowsOfEveryMicroBatch) {
  const Problem a = make_problem(200, 2, 6, world, LabelRule::spread, 31);
  const Problem b = make_problem(200, 2, 6, world, LabelRule::spread, 32);
  for (auto [method, rate] : {std::pair{PfcMethod::pfc, 0.1}, std::pair{PfcMethod::mp, 1.0},
                              std::pair{PfcMethod::dp, 1.0}}) {
    const std::string name(pfc_method_name(method));
    PartialFc alone(*backend, world_comm, options(a, method, rate));
    const Outcome ga = run_distributed(alone, a, 0);
    const std::vector<std::int64_t> rows_a = alone.sampled_index();
    const Outcome gb = run_distributed(alone, b, 1);
    const std::vector<std::int64_t> rows_b = alone.sampled_index();

    PartialFc acc(*backend, world_comm, options(a, method, rate));
    const Outcome first = run_distributed(acc, a, 0);
    const Outcome sum = run_distributed(acc, b, 1, CentreGradient::accumulate);
    EXPECT_EQ(first.loss, ga.loss) << name;
    EXPECT_EQ(sum.loss, gb.loss) << name;
    EXPECT_EQ(sum.embeddings_grad, gb.embeddings_grad) << name;
    std::vector<std::int64_t> rows;
    std::set_union(rows_a.begin(), rows_a.end(), rows_b.begin(), rows_b.end(),
                   std::back_inserter(rows));
    EXPECT_EQ(acc.sampled_index(), rows) << name;
    if (method == PfcMethod::pfc) EXPECT_GT(rows.size(), rows_a.size()) << "draws differ";
    // f32 sums, compared in the f32 they were made in.
    for (std::size_t i = 0; i < sum.global_grad.size(); ++i)
      ASSERT_EQ(static_cast<float>(sum.global_grad[i]),
                static_cast<float>(ga.global_grad[i]) + static_cast<float>(gb.global_grad[i]))
          << name << " element " << i;

    const std::vector<float> before = host_values(acc.weight());
    acc.step(0.1);
    const std::vector<float> after = host_values(acc.weight());
    for (std::int64_t row = 0; row < acc.layout().num_local; ++row) {
      const bool used = std::binary_search(rows.begin(), rows.end(), row);
      const auto at = static_cast<std::size_t>(row * a.emb);
      const bool moved = !std::equal(before.begin() + at, before.begin() + at + a.emb,
                                     after.begin() + at);
      EXPECT_EQ(moved, used) << name << " row " << row;
    }
  }
}

// The draw depends on (seed, step, rank) only: a resumed run samples what the first did.
TEST_F(PartialFcTest, SamplingIsAFunctionOfSeedStepAndRank) {
  const Problem p = make_problem(400, 2, 4, world, LabelRule::spread, 8);
  PartialFc a(*backend, world_comm, options(p, PfcMethod::pfc, 0.2));
  PartialFc b(*backend, world_comm, options(p, PfcMethod::pfc, 0.2));
  run_distributed(a, p, 5);
  run_distributed(b, p, 5);
  EXPECT_EQ(a.sampled_index(), b.sampled_index());
  const std::vector<std::int64_t> at5 = a.sampled_index();
  run_distributed(a, p, 6);
  EXPECT_NE(a.sampled_index(), at5);
}

TEST_F(PartialFcTest, RejectsLabelsOutsideTheClassesOnEveryRank) {
  for (std::int64_t bad : {std::int64_t{37}, std::int64_t{-1}}) {
    Problem p = make_problem(37, 3, 8, world, LabelRule::spread, 3);
    const int culprit = bad < 0 ? 0 : world - 1;
    p.labels[culprit * p.batch + 1] = bad;
    for (PfcMethod m : {PfcMethod::mp, PfcMethod::dp, PfcMethod::pfc}) {
      PartialFc fc(*backend, world_comm, options(p, m, 0.5));
      try {
        run_distributed(fc, p);
        ADD_FAILURE() << "label " << bad << " accepted";
      } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(fmt::format("label {} of sample 1 on rank {}", bad, culprit)),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find("[0, 37)"), std::string::npos) << what;
      }
    }
  }
  // Every rank stopped at the same point: the ranks still meet, and a good batch runs.
  world_comm.barrier();
  const Problem good = make_problem(37, 3, 8, world, LabelRule::spread, 3);
  PartialFc fc(*backend, world_comm, options(good, PfcMethod::mp, 1.0));
  EXPECT_GT(run_distributed(fc, good).loss, 0.0);
}

TEST_F(PartialFcTest, RejectsUnequalBatchSizesOnEveryRank) {
  if (world == 1) GTEST_SKIP() << "needs two ranks";
  const Problem p = make_problem(37, 3, 8, world, LabelRule::spread, 3);
  PartialFc fc(*backend, world_comm, options(p, PfcMethod::mp, 1.0));
  EXPECT_THROW(run(fc, p, rank * p.batch, rank == 0 ? 2 : 3), Error);
  world_comm.barrier();
}

// The trainer's split: labels set (and gathered) before the embeddings exist, used once.
TEST_F(PartialFcTest, EachForwardBackwardUsesTheLabelsSetForItsBatch) {
  const Problem p = make_problem(37, 3, 8, world, LabelRule::spread, 3);
  PartialFc fc(*backend, world_comm, options(p, PfcMethod::pfc, 0.5));
  Tensor labels = Tensor::host({p.batch}, DType::i64);
  std::copy_n(p.labels.begin() + rank * p.batch, p.batch, labels.data<std::int64_t>());
  Tensor emb = backend->empty({p.batch, p.emb}, DType::f32, MemoryPurpose::data);
  std::copy_n(p.embeddings.begin() + rank * p.batch * p.emb, p.batch * p.emb,
              emb.data<float>());
  Tensor grad;
  EXPECT_THROW(fc.forward_backward(emb, grad, 0), Error) << "no labels set";

  fc.set_labels(labels);
  const double split = fc.forward_backward(emb, grad, 0);
  EXPECT_THROW(fc.forward_backward(emb, grad, 0), Error) << "labels are used once";
  EXPECT_EQ(split, fc.forward_backward(emb, labels, grad, 0));

  fc.set_labels(labels);
  const Tensor fewer = emb.rows(0, p.batch - 1);
  Tensor fewer_grad;
  EXPECT_THROW(fc.forward_backward(fewer, fewer_grad, 0), Error) << "batch differs";
}

TEST_F(PartialFcTest, InjectionNeedsPfc) {
  const Problem p = make_problem(37, 1, 4, world, LabelRule::spread, 3);
  PartialFc fc(*backend, world_comm, options(p, PfcMethod::mp, 1.0));
  EXPECT_THROW(fc.inject_sampled_classes({1, 2}), UsageError);
}

}  // namespace
}  // namespace pfc
