#include "io/report_format.h"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <sstream>

namespace pfc {

namespace {

constexpr double kBytesPerGB = 1e9;
constexpr double kSeedMBPerGB = 1000;  // the seed's table heading says GB over MB figures
constexpr const char* kMissing = "–";

// 125000 -> "125 000", as the seed's article writes identity counts.
std::string group_thousands(std::int64_t value) {
  const std::string digits = std::to_string(value);
  std::string grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && digits[i - 1] != '-' && (digits.size() - i) % 3 == 0) grouped += ' ';
    grouped += digits[i];
  }
  return grouped;
}

std::string out_of_memory_text(const BenchRun& run) {
  if (run.mem_needed_bytes <= 0) return "OOM";
  return fmt::format("OOM (needs {:.1f} GB, {:.1f} available)",
                     static_cast<double>(run.mem_needed_bytes) / kBytesPerGB,
                     static_cast<double>(run.mem_available_bytes) / kBytesPerGB);
}

// Our figure for a cell: the value when the run finished, marked when it did not, the
// reason when it has none.
std::string our_text(const BenchCell& cell, const std::string& figure) {
  if (!cell.run) return kMissing;
  const BenchRun& run = *cell.run;
  if (run.status == "out_of_memory") return out_of_memory_text(run);
  if (run.status == "failed") return "failed";
  if (run.status == "running")
    return measured(run) ? figure + " (unfinished)" : std::string("unfinished");
  if (!measured(run)) return "not measured";
  // A run stopped by a signal (the time limit near) finished cleanly, after fewer steps.
  if (!run.message.empty()) return figure + " (stopped early)";
  return figure;
}

// A plan measured no speed: its speed cell says so (the bound has its own table).
std::string speed_text(const BenchCell& cell) {
  if (cell.run && cell.run->planned) return "planned";
  const double value = cell.run ? cell.run->samples_per_s : 0;
  return our_text(cell, fmt::format("{:.0f}", value));
}

std::string speed_with_comm_text(const BenchCell& cell) {
  if (cell.run && cell.run->planned) return "planned";
  const double value = cell.run ? samples_per_s_with_comm(*cell.run) : 0;
  return our_text(cell, fmt::format("{:.0f}", value));
}

// The least time a step takes on the plan's GPU, as a speed no run there can exceed.
std::string bound_text(const BenchCell& cell) {
  if (!cell.run || !cell.run->planned || cell.run->samples_per_s_bound <= 0) return kMissing;
  return fmt::format("{:.0f}", cell.run->samples_per_s_bound);
}

// How many cells hold a run that is measured (not planned) and emulated, and how many a plan.
struct RunKinds {
  bool measured = false, emulated = false, planned = false;
};

RunKinds run_kinds(const BenchTable& table) {
  RunKinds kinds;
  for (const auto& row : table.cells)
    for (const BenchCell& cell : row) {
      if (!cell.run) continue;
      kinds.planned |= cell.run->planned;
      kinds.measured |= !cell.run->planned;
      kinds.emulated |= !cell.run->planned && cell.run->emulated;
    }
  return kinds;
}

// What the device holds for the run: our peak plus the context's and libraries' share.
std::int64_t device_bytes(const BenchRun& run) {
  return run.mem_peak_bytes + run.device_overhead_bytes;
}

std::string memory_text(const BenchCell& cell) {
  const double value =
      cell.run ? static_cast<double>(device_bytes(*cell.run)) / kBytesPerGB : 0;
  return our_text(cell, fmt::format("{:.1f}", value));
}

// "8 × NVIDIA H200", "8 ranks emulated on NVIDIA H200", "2 ranks on cpu", "8 ranks planned
// for Tesla V100-SXM2-32GB".
std::string describe_setup(const BenchRun& run) {
  const std::string ranks = fmt::format("{} rank{}", run.world_size, run.world_size == 1 ? "" : "s");
  if (run.planned)
    return fmt::format("{} planned for {}", ranks, run.plan_gpu.empty() ? "cpu" : run.plan_gpu);
  std::set<std::string> names;
  std::istringstream list(run.gpu_names);
  for (std::string name; std::getline(list, name, ',');)
    if (!name.empty()) names.insert(name);
  const char* how = run.emulated ? " emulated" : "";
  if (run.device != "cuda" || names.empty())
    return fmt::format("{}{} on {}", ranks, how, run.device);
  std::string gpus;
  for (const std::string& name : names) gpus += (gpus.empty() ? "" : " + ") + name;
  if (run.emulated) return fmt::format("{} emulated on {}", ranks, gpus);
  return fmt::format("{} × {}", run.world_size, gpus);
}

std::string setups(const BenchTable& table) {
  std::set<std::string> seen;
  std::size_t runs = 0;
  for (const auto& row : table.cells)
    for (const BenchCell& cell : row)
      if (cell.run) {
        seen.insert(describe_setup(*cell.run));
        ++runs;
      }
  std::string text;
  for (const std::string& setup : seen) text += (text.empty() ? "" : "; ") + setup;
  return fmt::format("{} run(s): {}", runs, text.empty() ? "none" : text);
}

template <class OurText, class SeedText>
std::string markdown_table(const BenchTable& table, OurText ours, SeedText seed) {
  std::string text = "| identities |";
  std::string rule = "|---:|";
  for (const std::string& column : table.columns) {
    text += fmt::format(" {} | {} seed |", column, column);
    rule += "---:|---:|";
  }
  text += "\n" + rule + "\n";
  for (std::size_t r = 0; r < table.identities.size(); ++r) {
    text += "| " + group_thousands(table.identities[r]) + " |";
    for (const BenchCell& cell : table.cells[r])
      text += fmt::format(" {} | {} |", ours(cell), cell.seed ? seed(*cell.seed) : kMissing);
    text += "\n";
  }
  return text;
}


}  // namespace

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string format_report_markdown(const BenchTable& table) {
  const std::string measured = setups(table);
  const RunKinds kinds = run_kinds(table);
  const auto seed_speed = [](const SeedFigure& s) {
    return fmt::format("{:.0f}", s.samples_per_s);
  };
  std::string text;
  if (kinds.measured) {
    text += "## Training speed (samples/s, all ranks together; larger is better)\n\n";
    text += fmt::format("Ours: {}. Seed: 8 × Tesla V100-SXM2-32GB, one node.\n\n", measured);
    text += markdown_table(table, speed_text, seed_speed);
  }
  if (kinds.emulated) {
    text += "\n## Training speed with the modelled communication (samples/s)\n\n";
    text += "Emulated runs measure one rank's compute; here each step also spends the time "
            "their collectives would take on the modelled network (metrics.h5 comm_time_s; "
            "pfc does not overlap them with compute). Real runs as measured.\n\n";
    text += markdown_table(table, speed_with_comm_text, seed_speed);
  }
  if (kinds.planned) {
    text += fmt::format("{}## Speed bound (samples/s, all ranks together; no step can be faster)"
                        "\n\n",
                        text.empty() ? "" : "\n");
    text += fmt::format("Ours: {}. Each plan's step, from its FLOPs (tensor-core and other), "
                        "bytes and collective bus bytes at the GPU's peak rates "
                        "(plan/gpu_specs.cpp), whichever takes longest. Seed: measured, "
                        "8 × Tesla V100-SXM2-32GB.\n\n",
                        measured);
    text += markdown_table(table, bound_text, seed_speed);
  }
  text += "\n## GPU memory (GB per GPU, 1 GB = 10^9 bytes; smaller is better)\n\n";
  if (kinds.measured)
    text += "Ours measured: the peak of pfc's own device allocations on the busiest rank, plus "
            "what the CUDA context, the libraries and NCCL hold on rank 0's device. ";
  if (kinds.planned)
    text += "Ours planned: the peak of pfc's tensors on the busiest rank, exact (the memory "
            "ledger of a meta run), plus the modelled rest (cuBLAS and cuDNN workspaces, the CUDA "
            "context, NCCL's buffers: plan/device_overhead_model.cpp); OOM where it would not "
            "fit the arena pfc reserves. ";
  text += "Seed: gpustat's MB (whole device, context included) on the busiest GPU, divided by "
          "1000.\n\n";
  text += markdown_table(table, memory_text, [](const SeedFigure& s) {
    // From the integer MB, rounding halves up as the seed's table does (19950 -> 20.0).
    return fmt::format("{:.1f}", std::round(s.memory_mb / (kSeedMBPerGB / 10)) / 10);
  });
  text += fmt::format("\n{} = not run (or, for the seed, out of memory); OOM = did not fit, with "
                      "what the run needed and what the device had; unfinished = the run "
                      "ended before it wrote its summary; stopped early = stopped by a signal "
                      "(the time limit near) after fewer steps than asked; not measured = "
                      "stopped before a step after the warm-up{}.\n",
                      kMissing, kinds.planned ? "; planned = a plan, which measures no speed" : "");
  return text;
}

std::string format_report_csv(const BenchTable& table) {
  std::string text =
      "identities,column,status,samples_per_s,seed_samples_per_s,mem_peak_gb,seed_mem_gb,"
      "mem_needed_gb,mem_available_gb,world_size,emulated,device,gpu_names,path,"
      "samples_per_s_with_comm,mem_device_gb,network,setup,planned,samples_per_s_bound\n";
  const auto gb = [](std::int64_t bytes) {
    return fmt::format("{:.3f}", static_cast<double>(bytes) / kBytesPerGB);
  };
  for (std::size_t r = 0; r < table.identities.size(); ++r)
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      const BenchCell& cell = table.cells[r][c];
      if (!cell.run && !cell.seed) continue;
      std::string line = fmt::format("{},{},", table.identities[r], csv_field(table.columns[c]));
      if (cell.run) {
        const BenchRun& run = *cell.run;
        const bool has_figures =
            measured(run) && (run.status == "ok" || run.status == "running");
        // A plan has memory figures but no speed (its bound is a column of its own).
        const bool has_speed = has_figures && !run.planned;
        line += run.status + ",";
        line += has_speed ? fmt::format("{:.1f}", run.samples_per_s) : "";
        line += ",";
        line += cell.seed ? fmt::format("{:.0f}", cell.seed->samples_per_s) : "";
        line += ",";
        line += has_figures ? gb(run.mem_peak_bytes) : "";
        line += ",";
        line += cell.seed ? fmt::format("{:.3f}", cell.seed->memory_mb / kSeedMBPerGB) : "";
        line += ",";
        line += run.status == "out_of_memory" ? gb(run.mem_needed_bytes) + "," +
                                                    gb(run.mem_available_bytes)
                                              : std::string(",");
        line += fmt::format(",{},{},{},{},{},", run.world_size, run.emulated ? 1 : 0,
                            csv_field(run.device), csv_field(run.gpu_names),
                            csv_field(run.path));
        line += has_speed ? fmt::format("{:.1f}", samples_per_s_with_comm(run)) : "";
        line += ",";
        line += has_figures ? gb(device_bytes(run)) : "";
        line += ",";
        line += csv_field(run.network);
        line += ",";
        line += csv_field(describe_setup(run));
        line += fmt::format(",{},", run.planned ? 1 : 0);
        line += run.samples_per_s_bound > 0 ? fmt::format("{:.1f}", run.samples_per_s_bound) : "";
        line += "\n";
      } else {
        line += fmt::format("missing,,{:.0f},,{:.3f},,,,,,,,,,,,,\n", cell.seed->samples_per_s,
                            cell.seed->memory_mb / kSeedMBPerGB);
      }
      text += line;
    }
  return text;
}

}  // namespace pfc
