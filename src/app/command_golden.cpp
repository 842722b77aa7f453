// `pfc golden FILE --case GROUP/CASE ...`: rebuilds arcface_torch's network from a golden
// file, runs forward and backward on the chosen backend and precision, and compares every
// stored tensor with the file's exact (f64) values by the precision's rule (golden_table.h); a
// training case (one with optimiser steps) runs them through the trainer's step and compares
// the state after them. Each case runs under the arcface_torch version that wrote it (its
// `classifier_update` and `margin_gradient`), or the one the options name. Exit code 3 when
// any tensor, or the fp32 median rule, fails.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <memory>

#include "app/commands.h"
#include "app/golden_backbone.h"
#include "app/golden_partial_fc.h"
#include "app/golden_table.h"
#include "app/golden_training.h"
#include "app/rank_place.h"
#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "config/config.h"
#include "optim/classifier_storage.h"

namespace pfc {

namespace {

struct GoldenOptions {
  std::string file;
  std::vector<std::string> cases;
  std::string device = "cpu";
  std::string precision = "fp32";
  double tolerance = 0;  // 0: the precision's rule
  std::string classifier_storage = "f32";
  // Replace the case's own arcface_torch version (its attributes): a case must fail under the
  // other one. Empty: the case's.
  std::string classifier_update;
  std::string margin_gradient;
  std::string cpu_convolutions = "reference";
};

int run_golden(const GoldenOptions& options) {
  if (options.precision == "bf16")
    throw UsageError("--precision bf16: pfc golden checks arcface_torch's fp32 and fp64 (and "
                     "fp16 on cuda); bf16 is an inference precision of pfc embed, verify and "
                     "ijb");
  const bool fp16 = options.precision == "fp16";
  if (fp16 && options.device != "cuda")
    throw UsageError("--precision fp16 needs --device cuda (the CPU backend computes in fp32)");
  if (options.precision == "fp64" && options.device != "cpu")
    throw UsageError("--precision fp64 needs --device cpu (f64 runs on the CPU backend only)");
  // fp64 is an f64 run: backbone and classifier f64 from the input to the last gradient.
  const DType run_dtype = options.precision == "fp64" ? DType::f64 : DType::f32;
  const DType activations = fp16 ? DType::f16 : run_dtype;
  const GoldenRule rule =
      golden_rule(options.precision, options.device == "cuda", options.tolerance);
  GoldenFile file(options.file);
  RankPlace place = make_rank_place(parse_backend_kind(options.device, "--device"),
                                    Config().collective_timeout_s);
  // The host comm holds nothing of the backend, so the CPU one can be swapped for the kind asked.
  if (options.device == "cpu")
    place.backend = std::make_unique<CpuBackend>(options.cpu_convolutions == "onednn"
                                                     ? CpuConvolutions::onednn
                                                     : CpuConvolutions::reference);
  Comm& comm = *place.comm;
  Backend& backend = *place.backend;
  const bool report = comm.rank() == 0;
  // 16-bit centres: their f64 reference runs on the CPU backend, on the same ranks.
  GoldenStorage storage{parse_classifier_storage(options.classifier_storage), &backend, &comm};
  RankPlace reference_place;
  if (is_16bit_float(storage.type) && backend.device() != DeviceKind::cpu) {
    reference_place = make_rank_place(BackendKind::cpu, Config().collective_timeout_s);
    storage.reference_backend = reference_place.backend.get();
    storage.reference_comm = reference_place.comm.get();
  }

  int failures = 0;
  for (const std::string& spec : options.cases) {
    const auto slash = spec.find('/');
    if (slash == std::string::npos)
      throw UsageError(fmt::format("--case '{}' is not GROUP/CASE (e.g. tiny/arcface_sr1)", spec));
    const std::string group = spec.substr(0, slash), case_name = spec.substr(slash + 1);
    const GoldenNetwork network = file.network(group);
    GoldenCase golden_case = file.golden_case(group, case_name);
    if (!options.classifier_update.empty())
      golden_case.classifier_update = options.classifier_update;
    if (!options.margin_gradient.empty()) golden_case.margin_gradient = options.margin_gradient;

    const auto start = std::chrono::steady_clock::now();
    GoldenTable table(fmt::format("{}  ({}, {}{}, {} rank{}; against the {} file {}; {} update, "
                                  "{} margin gradient)",
                                  spec, options.device, options.precision,
                                  is_16bit_float(storage.type)
                                      ? fmt::format(", class centres stored in {}",
                                                    options.classifier_storage)
                                      : "",
                                  comm.world_size(), comm.world_size() > 1 ? "s" : "",
                                  file.precision(), file.path(), golden_case.classifier_update,
                                  golden_case.margin_gradient),
                      rule);
    const DType gemm_operands = fp16 ? DType::f16 : run_dtype;
    if (const auto training = file.training(group, case_name)) {
      if (is_16bit_float(storage.type))
        throw UsageError(fmt::format(
            "--classifier-storage {} checks forward and backward cases; {} steps an optimiser, "
            "whose 16-bit rounding is stochastic: check it with f32",
            options.classifier_storage, spec));
      check_golden_training(file, network, golden_case, *training, backend, comm, run_dtype,
                            activations, gemm_operands, table);
    } else {
      // The backbone is checked on rank 0; the classifier on every rank, sharded.
      if (report) check_golden_backbone(file, network, golden_case, backend, activations, table);
      check_golden_partial_fc(file, network, golden_case, backend, comm, run_dtype,
                              gemm_operands, table, storage);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (report) {
      table.print();
      fmt::print("time: {:.2f} s\n", seconds);
    }
    failures += table.failures();
  }
  const int any = static_cast<int>(comm.all_reduce_scalar(failures, ReduceOp::max));
  return any > 0 ? kExitCheckFailed : kExitOk;
}

}  // namespace

CommandRunner add_golden_command(CLI::App& app) {
  auto options = std::make_shared<GoldenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "golden",
      "Compare pfc with arcface_torch's golden values (forward, backward, loss, and the "
      "optimiser steps of the training cases, at the rates of their learning-rate schedule)");
  cmd->add_option("file", options->file, "golden HDF5 file (tests/golden/...)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--case", options->cases,
                  "GROUP/CASE to check, e.g. tiny/arcface_sr1, or tiny/adamw_2steps in the "
                  "parity file")
      ->required();
  cmd->add_option("--device", options->device, "cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--precision", options->precision,
                  "fp32: each tensor within max(1e-4, 4 x arcface_torch's own fp32 error) and "
                  "the median of our error / arcface_torch's at most 1; fp64 (cpu only; "
                  "everything f64): within 1e-10 of exact; fp16 (cuda only): within 1e-2")
      ->check(CLI::IsMember({"fp32", "fp16", "fp64", "bf16"}));
  cmd->add_option("--classifier-storage", options->classifier_storage,
                  "the class centres in f32, or stored in f16 or bf16 (forward and backward "
                  "cases): each tensor's bound grows by the error that rounding the exact centres "
                  "to 16 bits makes in an exact computation (pfc's f64 run on them)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  cmd->add_option("--classifier-update", options->classifier_update,
                  "run the cases under this centre update instead of their own (sampled: the "
                  "seed's; dense: today's PartialFC_V2); a case must fail under the other")
      ->check(CLI::IsMember({"sampled", "dense"}));
  cmd->add_option("--margin-gradient", options->margin_gradient,
                  "run the cases under this margin gradient instead of their own (exact: the "
                  "seed's; straight_through: today's)")
      ->check(CLI::IsMember({"exact", "straight_through"}));
  cmd->add_option("--cpu-convolutions", options->cpu_convolutions,
                  "f32 convolutions on the CPU: reference (the forward pass accumulated in f64, "
                  "as exact as the fp32 rule asks) or onednn (what training runs: f32 "
                  "accumulation, faster)")
      ->check(CLI::IsMember({"reference", "onednn"}))
      ->capture_default_str();
  cmd->add_option("--tolerance", options->tolerance,
                  "replaces the per-tensor bound of the precision's rule (the fp32 median "
                  "rule still applies); a positive number")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // CLI11's own PositiveNumber lets NaN through (NaN <= 0 is false).
            double value = 0;
            if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value <= 0)
              return "must be a positive finite number, got " + text;
            return {};
          },
          "POSITIVE"));
  return [options] { return run_golden(*options); };
}

}  // namespace pfc
