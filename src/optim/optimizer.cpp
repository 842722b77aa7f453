#include "optim/optimizer.h"

#include <fmt/format.h>

#include "core/error.h"

namespace pfc {

namespace {

class Sgd final : public Optimizer {
 public:
  explicit Sgd(const OptimizerSettings& s) : Optimizer(s) {}

  std::vector<std::string> moment_names() const override { return {"momentum"}; }

  void update(Backend& backend, Tensor& w, const Tensor& g, OptimizerState& state, double lr,
              bool decay) const override {
    check_state(w, state, "SGD update");
    backend.sgd_update(w, g, state.moments[0], lr, settings().momentum,
                       decay ? settings().weight_decay : 0.0);
    ++state.updates;
  }

  void update_rows(Backend& backend, Tensor& w, const Tensor& index, const Tensor& g,
                   OptimizerState& state, double lr, ClassifierUpdate rows) const override {
    check_state(w, state, "SGD row update");
    const double momentum = settings().momentum, decay = settings().weight_decay;
    if (rows == ClassifierUpdate::dense) {
      backend.sgd_update_sparse_grad(w, state.moments[0], index, g, lr, momentum, decay);
    } else {
      backend.sgd_update_rows(w, state.moments[0], index, g, lr, momentum, decay);
    }
    ++state.updates;
  }
};

class AdamW final : public Optimizer {
 public:
  explicit AdamW(const OptimizerSettings& s) : Optimizer(s) {}

  std::vector<std::string> moment_names() const override { return {"exp_avg", "exp_avg_sq"}; }

  void update(Backend& backend, Tensor& w, const Tensor& g, OptimizerState& state, double lr,
              bool decay) const override {
    check_state(w, state, "AdamW update");
    backend.adamw_update(w, g, state.moments[0], state.moments[1], params(lr, decay, state));
    ++state.updates;
  }

  void update_rows(Backend& backend, Tensor& w, const Tensor& index, const Tensor& g,
                   OptimizerState& state, double lr, ClassifierUpdate rows) const override {
    check_state(w, state, "AdamW row update");
    const AdamWParams p = params(lr, true, state);
    if (rows == ClassifierUpdate::dense) {
      backend.adamw_update_sparse_grad(w, state.moments[0], state.moments[1], index, g, p);
    } else {
      backend.adamw_update_rows(w, state.moments[0], state.moments[1], index, g, p);
    }
    ++state.updates;
  }

 private:
  // The constants of the state's next update (t counts from 1).
  AdamWParams params(double lr, bool decay, const OptimizerState& state) const {
    const OptimizerSettings& s = settings();
    return {lr, s.beta1, s.beta2, s.eps, decay ? s.weight_decay : 0.0, state.updates + 1};
  }
};

}  // namespace

OptimizerKind parse_optimizer_kind(std::string_view name) {
  if (name == "sgd") return OptimizerKind::sgd;
  if (name == "adamw") return OptimizerKind::adamw;
  throw UsageError(fmt::format("unknown optimizer '{}': expected \"sgd\" or \"adamw\"", name));
}

OptimizerSettings optimizer_settings(const Config& cfg) {
  OptimizerSettings s;
  s.kind = parse_optimizer_kind(cfg.optimizer);
  s.momentum = cfg.momentum;
  s.weight_decay = cfg.weight_decay;
  return s;
}

std::string_view optimizer_name(OptimizerKind kind) {
  return kind == OptimizerKind::adamw ? "adamw" : "sgd";
}

OptimizerState Optimizer::zero_state(Backend& backend, const Shape& shape, DType dtype) const {
  OptimizerState state;
  for (std::size_t i = 0; i < moment_names().size(); ++i)
    state.moments.push_back(backend.zeros(shape, dtype, MemoryPurpose::optimizer));
  return state;
}

void Optimizer::check_state(const Tensor& w, const OptimizerState& state, const char* op) const {
  const std::vector<std::string> names = moment_names();
  PFC_CHECK(state.moments.size() == names.size(), "{}: the state holds {} moments, expected {}",
            op, state.moments.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    check_shape(state.moments[i], w.shape(), op, names[i].c_str());
    check_dtype(state.moments[i], w.dtype(), op, names[i].c_str());
  }
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSettings& settings) {
  if (settings.kind == OptimizerKind::adamw) return std::make_unique<AdamW>(settings);
  return std::make_unique<Sgd>(settings);
}

}  // namespace pfc
