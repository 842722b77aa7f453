#include "plan/plan_text.h"

#include <fmt/format.h>

#include "comm/ring_cost.h"

namespace pfc {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double gib(std::int64_t bytes) { return static_cast<double>(bytes) / kGiB; }

// The device's memory that shares are taken of: the GPU's, or for a cpu plan what the rank has.
std::int64_t device_memory(const Plan& plan) {
  if (plan.gpu) return plan.gpu->memory_bytes;
  return plan.largest().available_bytes;
}

std::string share(std::int64_t bytes, std::int64_t of) {
  if (of <= 0) return "";
  return fmt::format("{:6.1f} %", 100.0 * static_cast<double>(bytes) / static_cast<double>(of));
}

std::string describe(const Plan& plan, const Config& cfg) {
  const std::string ranks = cfg.emulate_world_size > 0
                                ? fmt::format("rank {} of {} (emulated)", cfg.emulate_rank,
                                              plan.world_size)
                                : fmt::format("{} rank(s)", plan.world_size);
  const std::string where =
      plan.gpu ? fmt::format("cuda on {}", plan.gpu->name) : std::string("cpu (this host)");
  const std::string method = cfg.method == "pfc" ? fmt::format("pfc {:g}", cfg.sample_rate)
                                                 : cfg.method;
  const bool f16_classifier = cfg.fp16 && cfg.classifier_precision == "fp16";
  return fmt::format("plan: {}, planning {}; {}, batch {} per rank, fp16 {}, embedding {}, "
                     "method {}, {} classes ({:.1f} s)\n"
                     "  classifier: {} update, {} margin gradient, {} GEMMs\n",
                     ranks, where, cfg.network, cfg.batch_size, cfg.fp16 ? "on" : "off",
                     cfg.embedding_size, method, cfg.num_classes, plan.seconds,
                     cfg.classifier_update, cfg.margin_gradient, f16_classifier ? "f16" : "f32");
}

std::string memory_table(const Plan& plan, const RankPlan& r, std::size_t index) {
  const std::int64_t of = device_memory(plan);
  std::string text = fmt::format("\nmemory of rank {} (GiB, and the share of {:.2f} GiB){}\n",
                                 index, gib(of),
                                 plan.gpu ? fmt::format(" on {}", plan.gpu->name) : "");
  text += "  pfc's tensors, exact (each purpose's peak):\n";
  for (std::size_t p = 0; p < kMemoryPurposeCount; ++p)
    text += fmt::format("    {:<22}{:10.3f}\n", memory_purpose_name(static_cast<MemoryPurpose>(p)),
                        gib(r.exact_by_purpose[p]));
  text += fmt::format("    {:<22}{:10.3f} {}\n", "peak of all together", gib(r.exact_peak),
                      share(r.exact_peak, of));
  text += "  modelled (plan/device_overhead_model.cpp):\n";
  for (const ModelledTerm& t : r.modelled)
    text += fmt::format("    {:<22}{:10.3f}   {}{}\n", t.name, gib(t.bytes),
                        t.in_arena || !plan.gpu ? "" : "beside the arena; ", t.source);
  text += fmt::format("  {:<24}{:10.3f} {}\n", "total", gib(r.total_bytes),
                      share(r.total_bytes, of));
  return text;
}

std::string ranks_table(const Plan& plan) {
  if (plan.ranks.size() < 2) return "";
  std::string text = "\nevery rank (GiB): rank, pfc's tensors, modelled, total, needed, available\n";
  for (std::size_t i = 0; i < plan.ranks.size(); ++i) {
    const RankPlan& r = plan.ranks[i];
    text += fmt::format("  {:>4} {:10.3f} {:10.3f} {:10.3f} {:10.3f} {:10.3f}\n", i,
                        gib(r.exact_peak), gib(r.modelled_bytes()), gib(r.total_bytes),
                        gib(r.needed_bytes), gib(r.available_bytes));
  }
  return text;
}

std::string arithmetic_table(const Plan& plan) {
  std::string text = fmt::format("\none step of rank {} (TC: on tensor cores):\n", plan.rank);
  text += fmt::format("  {:<30}{:>7}{:>12}{:>13}{:>11}{:>11}\n", "primitive", "calls", "TC GFLOP",
                      "other GFLOP", "GB read", "GB written");
  const auto line = [](const std::string& name, const Work& w) {
    return fmt::format("  {:<30}{:>7.0f}{:>12.2f}{:>13.2f}{:>11.3f}{:>11.3f}\n", name, w.calls,
                       w.tensor_flops / 1e9, w.other_flops / 1e9, w.bytes_read / 1e9,
                       w.bytes_written / 1e9);
  };
  for (const auto& [name, work] : plan.step.by_primitive()) text += line(name, work);
  text += line("total", plan.step.total());
  text += "  collectives (ring model, comm/ring_cost.h):\n";
  for (const auto& [kind, w] : plan.collectives)
    text += fmt::format("    {:<16}{:>5.0f} calls {:>12.3f} MB payload {:>12.3f} MB over the link\n",
                        collective_name(kind), w.calls, w.bytes / 1e6, w.bus_bytes / 1e6);
  if (plan.collectives.empty()) text += "    none\n";
  return text;
}

std::string bound_text(const Plan& plan) {
  if (!plan.bound) {
    return plan.plan_for == BackendKind::cpu ? "\nno step-time bound: no peak rates for a cpu plan\n"
                                             : "";
  }
  const StepBound& b = *plan.bound;
  return fmt::format(
      "\nstep-time bound on {} (gpu_specs.cpp peaks): tensor cores {:.4f} s, fp32 units {:.4f} "
      "s, memory {:.4f} s, interconnect {:.4f} s\n  a step takes at least {:.4f} s ({}): at "
      "most {:.0f} samples/s for {} rank(s) together\n",
      plan.gpu->name, b.tensor_s, b.other_s, b.memory_s, b.comm_s, b.step_s, b.limiter,
      b.samples_per_s, plan.world_size);
}

// What a checkpoint takes, which pfc train checks before it writes one (io/checkpoint_room.h).
std::string checkpoint_text(const Plan& plan) {
  return fmt::format("  a checkpoint: {:.2f} GiB on disk (the backbone and every rank's class "
                     "centres), {:.2f} GiB of host memory staged by the rank that writes the "
                     "most\n",
                     gib(plan.checkpoint.disk_bytes), gib(plan.checkpoint.largest_host_bytes));
}

}  // namespace

std::string plan_shortfall(const Plan& plan) {
  const RankPlan& r = plan.largest();
  return fmt::format("needs {:.2f} GiB per rank, {:.2f} available", gib(r.needed_bytes),
                     gib(r.available_bytes));
}

std::string format_plan(const Plan& plan, const Config& cfg) {
  std::string text = describe(plan, cfg);
  const RankPlan& largest = plan.largest();
  const auto index = static_cast<std::size_t>(&largest - plan.ranks.data());
  text += memory_table(plan, largest, cfg.emulate_world_size > 0 ? cfg.emulate_rank : index);
  const char* against = plan.gpu ? "the arena pfc reserves by default" : "this host's memory";
  text += plan.fits()
              ? fmt::format("  fits: needs {:.2f} GiB per rank of the {:.2f} available ({})\n",
                            gib(largest.needed_bytes), gib(largest.available_bytes), against)
              : fmt::format("  does not fit: {} ({})\n", plan_shortfall(plan), against);
  text += ranks_table(plan);
  text += checkpoint_text(plan);
  text += arithmetic_table(plan);
  text += bound_text(plan);
  return text;
}

}  // namespace pfc
