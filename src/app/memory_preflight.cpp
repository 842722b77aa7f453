#include "app/memory_preflight.h"

#include <fmt/format.h>

#include "app/rank_place.h"
#include "backend/meta/meta_backend.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "optim/classifier_storage.h"
#include "optim/optimizer.h"
#include "pfc/pfc_method.h"
#include "pfc/shard_layout.h"
#include "plan/max_classes.h"
#include "plan/plan_text.h"
#include "plan/run_plan.h"

namespace pfc {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Available {
  std::int64_t bytes = 0;
  std::string what;
};

Available available_to_one_rank(const Config& cfg, BackendKind kind) {
  const bool emulated = cfg.emulate_world_size > 0;
  if (kind == BackendKind::cuda)
    return {cuda_arena_reservation_bytes(emulated ? 0 : rank_device_ordinal(kind)),
            "the arena its GPU can reserve: PFC_CUDA_ARENA_BYTES, or 92% of the free memory"};
  const HostMemory host = host_memory_available();
  const int sharing = emulated ? 1 : ranks_on_this_node();
  return {host.available_bytes / sharing,
          fmt::format("{} of this host, shared by {} rank(s)", host.source, sharing)};
}

// The largest shard's class centres and their optimiser moments (SGD's momentum, AdamW's two)
// in the types they are stored in: the least a rank needs, known without a plan. A classifier
// this far out of reach is refused by its size alone, before a plan whose byte counts could
// pass what a 64-bit ledger holds.
double classifier_floor_bytes(const Config& cfg, int world_size) {
  const bool dp = parse_pfc_method(cfg.method) == PfcMethod::dp;
  const std::int64_t rows =
      dp ? cfg.num_classes : ShardLayout::make(cfg.num_classes, world_size, 0, 1.0).max_local();
  const OptimizerSettings optimizer = optimizer_settings(cfg);
  const DType weight =
      stored_weight_type(parse_classifier_storage(cfg.classifier_storage), DType::f32);
  const auto moments = static_cast<double>(make_optimizer(optimizer)->moment_names().size());
  const double row_bytes =
      static_cast<double>(dtype_size(weight)) +
      moments * static_cast<double>(dtype_size(stored_moment_type(weight, optimizer.kind)));
  return row_bytes * static_cast<double>(rows) * static_cast<double>(cfg.embedding_size);
}

// What fits instead: the largest num_classes with the run's classifier_storage and, for an f32
// classifier, with f16 (plan/max_classes.h), to 1 %: a few plans more, seconds.
std::string what_fits(const Config& planned, Comm& comm, MetaBackend& meta,
                      std::int64_t available) {
  constexpr double kResolution = 1e-2;
  std::vector<MaxClasses> found;
  std::vector<std::string> storages{planned.classifier_storage};
  if (planned.classifier_storage == "f32") storages.emplace_back("f16");
  for (const std::string& storage : storages)
    found.push_back(largest_num_classes(planned, storage, comm, meta, {1, nullptr, available},
                                        kResolution));
  return fmt::format("; this config fits, to 1 %, {}", describe_max_classes(found));
}

[[noreturn]] void refuse(const Config& cfg, const std::string& need, const Available& available,
                         const std::string& fits) {
  const char* method_hint = cfg.method == "pfc" ? " or a lower sample_rate" : " or method \"pfc\"";
  const char* storage_hint =
      cfg.classifier_storage == "f32" ? ", classifier_storage = \"f16\"" : "";
  throw UsageError(fmt::format(
      "this run does not fit: it {} ({}){}; lower num_classes or batch_size, use more ranks{}{}, "
      "or set memory_check = false to try anyway",
      need, available.what, fits, method_hint, storage_hint));
}

}  // namespace

void check_run_fits(const Config& cfg) {
  const BackendKind kind = parse_backend_kind(cfg.device, "device");
  const Available available = available_to_one_rank(cfg, kind);
  Config planned = cfg;
  planned.device = "meta";
  planned.plan_for = std::string(backend_kind_name(kind));
  RankPlace place = make_run_place(planned);
  auto& meta = dynamic_cast<MetaBackend&>(*place.backend);
  const double floor = classifier_floor_bytes(cfg, place.comm->world_size());
  if (floor > static_cast<double>(available.bytes))
    refuse(cfg,
           fmt::format("needs at least {:.2f} GiB per rank for its class centres and their "
                       "optimiser moments alone, {:.2f} available",
                       floor / kGiB, static_cast<double>(available.bytes) / kGiB),
           available,
           // Far out of reach: the search would start from sizes no ledger counts.
           "; `pfc plan CONFIG --max-classes` names the largest num_classes that fits");
  const Plan plan = make_plan(planned, *place.comm, meta, {1, nullptr, available.bytes});
  if (!plan.fits())
    refuse(cfg, plan_shortfall(plan), available,
           what_fits(planned, *place.comm, meta, available.bytes));
}

}  // namespace pfc
