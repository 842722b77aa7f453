// The optimisers of `optimizer = "sgd" | "adamw"`, behind one interface that serves the
// backbone's flat parameter buffer (dense) and PartialFC's class centres (every row, or a step's
// sampled rows under either ClassifierUpdate). torch.optim's semantics: SGD with momentum and
// coupled weight decay (torch.optim.SGD, dampening 0); AdamW with decoupled weight decay and
// bias-corrected moments (torch.optim.AdamW, betas 0.9/0.999, eps 1e-8). An optimiser holds
// only its constants; each trained tensor's moments and update count are its OptimizerState.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "config/config.h"
#include "optim/classifier_update.h"

namespace pfc {

enum class OptimizerKind { sgd, adamw };

// "sgd" | "adamw"; throws pfc::UsageError naming the value otherwise.
OptimizerKind parse_optimizer_kind(std::string_view name);
std::string_view optimizer_name(OptimizerKind kind);

struct OptimizerSettings {
  OptimizerKind kind = OptimizerKind::sgd;
  double weight_decay = 5e-4;
  double momentum = 0.9;                          // sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adamw (torch.optim.AdamW's defaults)
};

// The config's optimizer, momentum and weight_decay.
OptimizerSettings optimizer_settings(const Config& cfg);

// One trained tensor's optimiser state: its moments, each shaped and typed like the tensor, in
// the order of Optimizer::moment_names(), and how many updates it has had (AdamW's bias
// correction counts them; a row update counts once for the whole table).
struct OptimizerState {
  std::vector<Tensor> moments;
  std::int64_t updates = 0;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  OptimizerKind kind() const { return settings_.kind; }
  const OptimizerSettings& settings() const { return settings_; }

  // torch.optim's names of the moments: SGD {"momentum"}, AdamW {"exp_avg", "exp_avg_sq"}
  // (checkpoints store them under these names).
  virtual std::vector<std::string> moment_names() const = 0;
  // Zero moments for a tensor of this shape and type (PyTorch creates them as zeros too).
  OptimizerState zero_state(Backend& backend, const Shape& shape, DType dtype) const;

  // One update of w with gradient g; decay: whether weight decay applies to w.
  virtual void update(Backend& backend, Tensor& w, const Tensor& g, OptimizerState& state,
                      double lr, bool decay) const = 0;
  // One update of w [rows, cols] whose gradient is row i of g at row index[i] (sorted,
  // unique): `sampled` moves those rows and their moments only, every other row stays as it
  // is; `dense` steps the whole of w as one parameter whose gradient is zero on every other
  // row (weight decay and moments reach every row). Weight decay applies either way.
  virtual void update_rows(Backend& backend, Tensor& w, const Tensor& index, const Tensor& g,
                           OptimizerState& state, double lr, ClassifierUpdate rows) const = 0;

 protected:
  explicit Optimizer(const OptimizerSettings& settings) : settings_(settings) {}
  // Checks that state holds moment_names().size() moments shaped like w.
  void check_state(const Tensor& w, const OptimizerState& state, const char* op) const;

 private:
  OptimizerSettings settings_;
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSettings& settings);

}  // namespace pfc
