#include "plan/plan_metrics.h"

#include <fmt/format.h>

#include <algorithm>

#include "comm/ring_cost.h"
#include "io/hdf5.h"
#include "plan/plan_text.h"

namespace pfc {

namespace {

void write_per_rank(hid_t id, const std::string& name, const Plan& plan,
                    std::int64_t (*figure)(const RankPlan&)) {
  Tensor t = Tensor::host({static_cast<std::int64_t>(plan.ranks.size())}, DType::i64);
  for (std::size_t r = 0; r < plan.ranks.size(); ++r)
    t.data<std::int64_t>()[r] = figure(plan.ranks[r]);
  h5::write_tensor(id, "/plan/" + name, t);
}

// A [rows, columns] f64 table with its row names as an attribute.
void write_table(hid_t id, const std::string& path, const char* names_attribute,
                 const std::vector<std::string>& names, const std::vector<std::vector<double>>& rows,
                 std::int64_t columns) {
  Tensor t = Tensor::host({static_cast<std::int64_t>(rows.size()), columns}, DType::f64);
  for (std::size_t r = 0; r < rows.size(); ++r)
    std::copy(rows[r].begin(), rows[r].end(), t.data<double>() + r * columns);
  h5::write_tensor(id, path, t);
  h5::write_attribute(id, path, names_attribute, fmt::format("{}", fmt::join(names, ",")));
}

void write_plan_group(hid_t id, const Plan& plan) {
  h5::require_group(id, "/plan");
  const auto text = [&](const char* name, const std::string& value) {
    h5::write_attribute(id, "/plan", name, value);
  };
  const auto real = [&](const char* name, double value) {
    h5::write_attribute(id, "/plan", name, value);
  };
  const auto integer = [&](const char* name, std::int64_t value) {
    h5::write_attribute(id, "/plan", name, value);
  };
  text("plan_for", std::string(backend_kind_name(plan.plan_for)));
  text("gpu", plan.gpu ? std::string(plan.gpu->key) : "");
  text("gpu_name", plan.gpu ? std::string(plan.gpu->name) : "");
  integer("device_memory_bytes", plan.gpu ? plan.gpu->memory_bytes : 0);
  integer("fits", plan.fits() ? 1 : 0);
  real("seconds", plan.seconds);
  if (plan.bound) {
    const StepBound& b = *plan.bound;
    real("step_time_bound_s", b.step_s);
    real("samples_per_s_bound", b.samples_per_s);
    text("limiter", std::string(b.limiter));
    real("tensor_s", b.tensor_s);
    real("other_s", b.other_s);
    real("memory_s", b.memory_s);
    real("comm_s", b.comm_s);
  }
  write_per_rank(id, "needed_bytes", plan, [](const RankPlan& r) { return r.needed_bytes; });
  write_per_rank(id, "total_bytes", plan, [](const RankPlan& r) { return r.total_bytes; });
  write_per_rank(id, "available_bytes", plan, [](const RankPlan& r) { return r.available_bytes; });
  write_per_rank(id, "exact_peak_bytes", plan, [](const RankPlan& r) { return r.exact_peak; });

  const RankPlan& largest = plan.largest();
  std::vector<std::string> terms;
  Tensor modelled = Tensor::host({static_cast<std::int64_t>(largest.modelled.size())}, DType::i64);
  for (std::size_t i = 0; i < largest.modelled.size(); ++i) {
    terms.push_back(largest.modelled[i].name);
    modelled.data<std::int64_t>()[i] = largest.modelled[i].bytes;
  }
  h5::write_tensor(id, "/plan/modelled_bytes", modelled);
  h5::write_attribute(id, "/plan/modelled_bytes", "names", fmt::format("{}", fmt::join(terms, ",")));

  std::vector<std::string> primitives;
  std::vector<std::vector<double>> work;
  for (const auto& [name, w] : plan.step.by_primitive()) {
    primitives.push_back(name);
    work.push_back({w.calls, w.tensor_flops, w.other_flops, w.bytes_read, w.bytes_written});
  }
  write_table(id, "/plan/arithmetic", "primitives", primitives, work, 5);
  std::vector<std::string> kinds;
  std::vector<std::vector<double>> moved;
  for (const auto& [kind, w] : plan.collectives) {
    kinds.emplace_back(collective_name(kind));
    moved.push_back({w.calls, w.bytes, w.hops, w.bus_bytes});
  }
  write_table(id, "/plan/collectives", "kinds", kinds, moved, 4);
}

}  // namespace

void write_plan_metrics(const std::string& path, const Config& cfg, const RunInfo& info,
                        const Plan& plan) {
  {
    MetricsWriter writer = MetricsWriter::create(path, cfg, info);
    StepMetrics row;
    row.step = plan.steps;
    row.wall_time_s = plan.seconds;
    row.loss_scale = 0;
    std::vector<MemoryPeaks> peaks;
    for (const RankPlan& r : plan.ranks) {
      row.step_time_s.push_back(0.0);
      row.mem_in_use_bytes.push_back(0);
      row.mem_peak_bytes.push_back(r.exact_peak);
      peaks.push_back(r.exact_by_purpose);
    }
    writer.append(row);
    writer.record_memory(peaks);
    std::int64_t modelled = 0;
    for (const RankPlan& r : plan.ranks) modelled = std::max(modelled, r.modelled_bytes());
    writer.record_device_overhead(modelled);
    const RankPlan& largest = plan.largest();
    writer.finish(plan.fits() ? RunOutcome{"ok", "", 0, 0}
                              : RunOutcome{"out_of_memory", "plan: " + plan_shortfall(plan),
                                           largest.needed_bytes, largest.available_bytes});
  }
  h5::File file(path, h5::Mode::read_write);
  write_plan_group(file.id(), plan);
  file.flush();
}

}  // namespace pfc
