#include "train/optimizer_checkpoint.h"

namespace pfc {

void save_optimizer_state(const Backbone& model, TrainingStep& step, PartialFc& head,
                          std::int64_t first_row, std::int64_t rows, bool with_backbone,
                          Checkpoint& checkpoint) {
  const std::vector<std::string> names = step.optimizer().moment_names();
  OptimizerState& centres = head.optimizer_state();
  Backend& backend = model.backend();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (with_backbone) {
      NamedMoment moment{names[i], {}};
      for (const Parameter* p : model.parameters())
        if (p->trainable)
          moment.tensors.push_back(
              {p->name, model.export_parameter(*p, step.backbone_moment(*p, i))});
      checkpoint.moments.push_back(std::move(moment));
    }
    checkpoint.shard.moments.push_back(
        {names[i], backend.to_host(centres.moments[i].rows(first_row, first_row + rows))});
  }
  TrainingState& state = checkpoint.state;
  state.optimizer = std::string(optimizer_name(step.optimizer().kind()));
  state.backbone_updates = step.backbone_state().updates;
  state.classifier_updates = centres.updates;
}

void restore_optimizer_state(const Checkpoint& checkpoint, const std::string& where,
                             Backbone& model, TrainingStep& step, PartialFc& head) {
  const std::vector<std::string> names = step.optimizer().moment_names();
  const auto require = [&](std::size_t have, const char* part) {
    PFC_CHECK(have == names.size(), "checkpoint {} holds {} optimiser moments of the {}, the {} "
              "optimiser needs {}", where, have, part, optimizer_name(step.optimizer().kind()),
              names.size());
  };
  require(checkpoint.moments.size(), "backbone");
  require(checkpoint.shard.moments.size(), "class centres");
  Backend& backend = model.backend();
  OptimizerState& centres = head.optimizer_state();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const NamedMoment& moment = checkpoint.moments[i];
    PFC_CHECK(moment.name == names[i] && checkpoint.shard.moments[i].name == names[i],
              "checkpoint {} holds moment '{}' where the optimiser keeps '{}'", where, moment.name,
              names[i]);
    std::size_t trainable = 0;
    for (const Parameter* p : model.parameters()) trainable += p->trainable;
    PFC_CHECK(moment.tensors.size() == trainable,
              "checkpoint {} holds {} of {} parameters, the backbone trains {}", where, names[i],
              moment.tensors.size(), trainable);
    for (const NamedTensor& t : moment.tensors) {
      Parameter* p = model.find_parameter(t.name);
      PFC_CHECK(p && p->trainable, "checkpoint {} has {} for unknown '{}'", where, names[i],
                t.name);
      PFC_CHECK(t.value.shape() == p->torch_shape, "checkpoint {}: {} of '{}' is {}, expected {}",
                where, names[i], t.name, shape_string(t.value.shape()),
                shape_string(p->torch_shape));
      Tensor ours = Tensor::host(p->value.shape(), DType::f32);
      torch_to_ours(*p, t.value.data<float>(), ours.data<float>());
      Tensor view = step.backbone_moment(*p, i);
      backend.copy(ours, view);
    }
    // In the type this run stores them in (a checkpoint of another classifier_storage is
    // converted, rounded to nearest).
    backend.copy_cast(checkpoint.shard.moments[i].value, centres.moments[i]);
  }
  step.backbone_state().updates = checkpoint.state.backbone_updates;
  centres.updates = checkpoint.state.classifier_updates;
}

}  // namespace pfc
