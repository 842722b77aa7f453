#include "train/trainer.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "comm/agree_to_stop.h"
#include "config/validate_config.h"
#include "core/fault_injection.h"
#include "core/stop_signals.h"
#include "data/data_source.h"
#include "eval/pretrained_backbone.h"
#include "io/checkpoint.h"
#include "io/checkpoint_layout.h"
#include "io/checkpoint_reader.h"
#include "io/checkpoint_room.h"
#include "io/checkpoint_values.h"
#include "io/checkpoint_writer.h"
#include "io/durable_file.h"
#include "io/metrics_writer.h"
#include "model/backbone_state.h"
#include "model/make_backbone.h"
#include "optim/classifier_storage.h"
#include "pfc/partial_fc.h"
#include "train/checkpoint_model_match.h"
#include "train/divergence_monitor.h"
#include "train/loss_scaler.h"
#include "train/lr_schedule.h"
#include "train/optimizer_checkpoint.h"
#include "train/progress_line.h"
#include "train/resume_checkpoint.h"
#include "train/run_description.h"
#include "train/run_start.h"
#include "train/training_log.h"
#include "train/training_step.h"
#include "train/verification_callback.h"

namespace pfc {

namespace {

using Clock = std::chrono::steady_clock;

// How long a stop asked by a signal may take before the process ends regardless (see train()).
constexpr int kStopGraceSeconds = 120;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Everything one rank holds during a run.
class TrainingRun {
 public:
  TrainingRun(const Config& cfg, Comm& comm, Backend& backend)
      : cfg_(cfg),
        comm_(comm),
        backend_(backend),
        backbone_(make_backbone(cfg, backend, network_precision(cfg, backend))),
        model_(*backbone_),
        head_(backend, comm, head_options(cfg)),
        schedule_(cfg, comm.world_size()),
        scaler_(scales_loss(cfg, backend), cfg.batch_size),
        stepper_(backend, comm, model_, head_, scaler_,
                 {cfg.gradient_acc, cfg.clip_grad_norm, optimizer_settings(cfg),
                  static_cast<std::uint64_t>(cfg.seed)}),
        data_(make_data_source(cfg, comm.rank(), comm.world_size(),
                               backend.staging_allocator())),
        images_(backend.empty({cfg.batch_size, cfg.image_size, cfg.image_size, 3}, DType::f32,
                              MemoryPurpose::data)) {
    model_.initialize(static_cast<std::uint64_t>(cfg.seed));
  }

  std::int64_t step() const { return step_; }
  std::int64_t last_step() const {
    const std::int64_t total = schedule_.total_steps();
    return cfg_.steps > 0 ? std::min(cfg_.steps, total) : total;
  }

  // One optimizer step of gradient_acc micro-batches (the backbone's update skipped on fp16
  // overflow). Returns the mean loss of its micro-batches.
  double train_step() {
    const double lr = schedule_.lr(step_);
    const StepResult result =
        stepper_.run([this](std::int64_t) { return next_batch(); }, step_, lr);
    last_step_applied_ = result.backbone_updated;
    last_lr_ = lr;
    ++step_;
    return result.mean_loss();
  }

  double last_lr() const { return last_lr_; }
  const LrSchedule& schedule() const { return schedule_; }
  double loss_scale() const { return scaler_.scale(); }
  bool scales_loss() const { return scaler_.enabled(); }
  // "bf16 products in the backbone's convolutions and token Linears, f32 activations; f16
  // classifier GEMMs; dynamic loss scale"
  std::string describe_precision() const {
    const NetworkPrecision p = network_precision(cfg_, backend_);
    return fmt::format("{} products in the backbone's convolutions and token Linears, {} "
                       "activations; {} classifier GEMMs; {}",
                       dtype_name(p.products), dtype_name(p.activations),
                       dtype_name(classifier_operands(cfg_)),
                       scaler_.enabled() ? "dynamic loss scale" : "no loss scaling");
  }
  // Whether the last step changed the backbone (false: fp16 overflow skipped it), and whether
  // the loss scale can go no lower.
  bool last_step_applied() const { return last_step_applied_; }
  bool loss_scale_at_floor() const { return !scaler_.enabled() || scaler_.scale() <= 1.0; }
  std::int64_t epoch() const { return data_->position().epoch; }
  std::int64_t skipped_records() const { return data_->skipped_records(); }

  // A new run's backbone from cfg.pretrained instead of the network's own initialisation:
  // the class centres, optimiser state, step and schedule stay those of a new run.
  void take_pretrained_backbone(bool leader) {
    const PretrainedBackbone pretrained = load_pretrained_backbone(model_, cfg_.pretrained);
    if (!leader) return;
    for (const std::string& note : pretrained.notes) spdlog::warn("{}", note);
    spdlog::info("pretrained: the backbone of {} ({}); new class centres for {} classes, and "
                 "the optimiser, step and schedule of a new run",
                 pretrained.origin, model_.describe(), cfg_.num_classes);
  }

  // What a checkpoint of this run costs: every file of it, and the host memory this rank and
  // the rank that copies the most (rank 0: the backbone too) stage it through. The backbone is
  // written in f32 (its masters, each trainable one's optimiser moments, its buffers), the
  // class centres and their moments in the types they are stored in.
  CheckpointCost checkpoint_cost() {
    std::int64_t backbone = 0;
    const auto moments = static_cast<std::int64_t>(stepper_.optimizer().moment_names().size());
    for (const Parameter* p : model_.parameters())
      backbone += p->value.numel() * (1 + (p->trainable ? moments : 0)) *
                  static_cast<std::int64_t>(sizeof(float));
    for (const Buffer* b : model_.buffers())
      backbone += b->value.numel() * static_cast<std::int64_t>(sizeof(float));
    std::int64_t row = dtype_size(head_.weight().dtype());
    for (const Tensor& m : head_.optimizer_state().moments) row += dtype_size(m.dtype());
    row *= cfg_.embedding_size;
    const ShardLayout saved = saved_layout();
    CheckpointCost cost;
    cost.disk_bytes = backbone + cfg_.num_classes * row;
    cost.host_bytes = (comm_.rank() == 0 ? backbone : 0) + saved.num_local * row;
    cost.largest_host_bytes = backbone + saved.max_local() * row;
    return cost;
  }

  CheckpointInfo save(const std::filesystem::path& root) {
    // Before anything is copied to the host or written: room for all of it, on every rank.
    CheckpointRoom room = measure_checkpoint_room(root);
    const auto fault = injected_fault_from_environment();
    if (fault_strikes(fault, comm_.rank(), step_, FaultPoint::no_room))
      room = {0, room.disk_folder + " (PFC_FAULT at:no_room)", 0, "PFC_FAULT at:no_room"};
    check_checkpoint_room(comm_, root, step_, checkpoint_cost(), room);
    Checkpoint ckpt;
    if (comm_.rank() == 0) {
      for (const Parameter* p : model_.parameters())
        ckpt.parameters.push_back({p->name, model_.export_parameter(*p)});
      for (const Buffer* b : model_.buffers()) {
        ckpt.buffers.push_back({b->name, backend_.to_host(b->value)});
      }
    }
    // DP holds every row on every rank; it saves the rows MP would give this rank.
    const ShardLayout saved = saved_layout();
    const std::int64_t offset = saved.class_start - head_.layout().class_start;
    ckpt.shard.class_start = saved.class_start;
    const std::int64_t end = offset + saved.num_local;
    ckpt.shard.weight = backend_.to_host(head_.weight().rows(offset, end));
    save_optimizer_state(model_, stepper_, head_, offset, saved.num_local, comm_.rank() == 0, ckpt);
    TrainingState& s = ckpt.state;
    s.step = step_;
    s.epoch = epoch();
    s.data = data_->position();
    s.loss_scale = scaler_.state().scale;
    s.loss_scale_clean_steps = scaler_.state().clean_steps;
    s.lr_step = step_;
    s.seed = cfg_.seed;
    s.method = cfg_.method;
    s.sample_rate = cfg_.sample_rate;
    s.num_classes = cfg_.num_classes;
    s.embedding_size = cfg_.embedding_size;
    s.config_toml = cfg_.source_text;
    const CheckpointInfo info = write_checkpoint(comm_, root, ckpt, cfg_.keep_checkpoints);
    if (comm_.rank() == 0) spdlog::info("checkpoint written: {}", info.path.string());
    return info;
  }

  // The part of a checkpoint this rank restores: the backbone and its own class rows.
  CheckpointRequest checkpoint_request() const {
    const ShardLayout& layout = head_.layout();
    return {cfg_.num_classes, cfg_.embedding_size, layout.class_start, layout.num_local,
            cfg_.optimizer};
  }

  void restore(const ResumedCheckpoint& resumed) {
    const Checkpoint& ckpt = resumed.checkpoint;
    const CheckpointInfo& info = resumed.info;
    check_checkpoint_fits_model(ckpt, model_, cfg_, info.path);
    import_backbone_state(model_, ckpt.parameters, ckpt.buffers);
    restore_optimizer_state(ckpt, info.path.string(), model_, stepper_, head_);
    const DType saved = ckpt.shard.weight.dtype(), stored = head_.weight().dtype();
    if (saved != stored && comm_.rank() == 0)
      spdlog::info("checkpoint {} stores the class centres in {}, this run in {} "
                   "(classifier_storage): converted once, rounded to nearest",
                   info.path.string(), dtype_name(saved), dtype_name(stored));
    backend_.copy_cast(ckpt.shard.weight, head_.weight());
    step_ = ckpt.state.step;
    data_->seek(ckpt.state.data);
    scaler_.restore({ckpt.state.loss_scale, ckpt.state.loss_scale_clean_steps});
    model_.refresh_working_copies();
  }

  Backbone& model() { return model_; }

 private:
  static NetworkPrecision network_precision(const Config& cfg, const Backend& backend) {
    const AllocationPolicy& policy = backend.allocation_policy();
    return {policy.activations(cfg.fp16), policy.products(cfg.fp16)};
  }
  static DType classifier_operands(const Config& cfg) {
    // On both backends, so that a CPU run computes the classifier as the GPU does.
    return cfg.fp16 && cfg.classifier_precision == "fp16" ? DType::f16 : DType::f32;
  }
  // The loss is scaled where some product takes f16 operands, whose range would lose small
  // gradients: the backbone on cuda, the classifier with classifier_precision = "fp16". bf16
  // has f32's range and needs none.
  static bool scales_loss(const Config& cfg, const Backend& backend) {
    return cfg.fp16 && (backend.allocation_policy().products(true) == DType::f16 ||
                        classifier_operands(cfg) == DType::f16);
  }
  static PartialFcOptions head_options(const Config& cfg) {
    PartialFcOptions o;
    o.num_classes = cfg.num_classes;
    o.embedding_size = cfg.embedding_size;
    o.sample_rate = cfg.sample_rate;
    o.margin = MarginParams{cfg.margin_list[0], cfg.margin_list[1], cfg.margin_list[2], cfg.scale_s};
    o.storage = parse_classifier_storage(cfg.classifier_storage);
    o.method = parse_pfc_method(cfg.method);
    o.seed = static_cast<std::uint64_t>(cfg.seed);
    o.gemm_operands = classifier_operands(cfg);
    o.interclass_filtering_threshold = cfg.interclass_filtering_threshold;
    o.optimizer = optimizer_settings(cfg);
    o.classifier_update = parse_classifier_update(cfg.classifier_update);
    o.margin_gradient = parse_margin_gradient(cfg.margin_gradient);
    return o;
  }

  // The data stream's next batch, its images on the device (once, for constant images).
  MicroBatch next_batch() {
    data_->next(batch_);
    if (!images_on_device_ || !data_->constant_images()) {
      backend_.copy(batch_.images, images_);
      images_on_device_ = true;
    }
    return {&images_, &batch_.labels};
  }

  ShardLayout saved_layout() const {
    return ShardLayout::make(cfg_.num_classes, comm_.world_size(), comm_.rank(), 1.0);
  }

  const Config& cfg_;
  Comm& comm_;
  Backend& backend_;
  std::unique_ptr<Backbone> backbone_;
  Backbone& model_;  // *backbone_
  PartialFc head_;
  LrSchedule schedule_;
  LossScaler scaler_;
  TrainingStep stepper_;  // holds the backbone's flat parameters and optimiser state
  std::unique_ptr<DataSource> data_;
  Batch batch_;
  Tensor images_;
  bool images_on_device_ = false;  // images_ holds a batch (enough for constant_images())
  std::int64_t step_ = 0;
  double last_lr_ = 0;
  bool last_step_applied_ = true;
};

// Per-rank figures of one step, gathered to every rank through the comm.
struct RankFigures {
  std::vector<double> step_time_s;
  std::vector<std::int64_t> mem_in_use, mem_peak;
  std::vector<MemoryPeaks> peak_by_purpose;
  std::int64_t skipped_records = 0;  // all ranks together
};

RankFigures gather_figures(Comm& comm, double step_time, const MemorySnapshot& m,
                           const MemoryPeaks& interval_peaks, std::int64_t skipped_records,
                           bool emulated) {
  // One f64 row per rank: step time, bytes in use, peak bytes, skipped records, then the peak
  // of every purpose. Byte counts stay exact in f64 below 2^53 (9 PB).
  constexpr std::int64_t kFixed = 4;
  constexpr std::int64_t kWidth = kFixed + static_cast<std::int64_t>(kMemoryPurposeCount);
  Tensor mine = Tensor::host({1, kWidth}, DType::f64);
  double* out = mine.data<double>();
  out[0] = step_time;
  out[1] = static_cast<double>(m.total_in_use);
  out[2] = static_cast<double>(m.total_peak);
  out[3] = static_cast<double>(skipped_records);
  for (std::size_t p = 0; p < kMemoryPurposeCount; ++p)
    out[kFixed + p] = static_cast<double>(interval_peaks[p]);
  // An emulated run is one process: its modelled peers would only repeat its row.
  const Tensor all = emulated ? mine : comm.all_gather_host(mine);
  const std::int64_t w = all.dim(0);
  RankFigures f;
  for (std::int64_t r = 0; r < w; ++r) {
    const double* row = all.data<double>() + kWidth * r;
    f.step_time_s.push_back(row[0]);
    f.mem_in_use.push_back(static_cast<std::int64_t>(row[1]));
    f.mem_peak.push_back(static_cast<std::int64_t>(row[2]));
    f.skipped_records += static_cast<std::int64_t>(row[3]);
    MemoryPeaks peaks{};
    for (std::size_t p = 0; p < kMemoryPurposeCount; ++p)
      peaks[p] = static_cast<std::int64_t>(row[kFixed + p]);
    f.peak_by_purpose.push_back(peaks);
  }
  return f;
}

}  // namespace

TrainerRun train(const Config& cfg, const RunStart& start, Comm& comm, Backend& backend,
                 const std::string& command_line) {
  // An emulated run is one process playing some rank: it writes what rank 0 would.
  const bool emulated = cfg.emulate_world_size > 0;
  const bool leader = emulated || comm.rank() == 0;
  // Before anything slow (a classifier of millions of rows, a dataset index): a stop signal
  // that arrives while the run is being set up ends it after its first step, with a summary,
  // instead of killing it. A second signal, or the grace period passing, ends the process at
  // once (core/stop_signals.h): the stop's checkpoint of a large run writes gigabytes, so the
  // grace is generous; a scheduler's own kill (Slurm's KillWait, 30 s by default) comes first.
  stop_at_safe_points(kStopGraceSeconds);
  validate_for_world(cfg, comm.world_size());
  const auto fault = injected_fault_from_environment();
  check_fault_rank(fault, comm.world_size());
  // A missing or unreadable verification target stops the run before anything is written.
  VerificationCallback verification(cfg, comm, leader);
  const std::filesystem::path output(cfg.output);
  const std::filesystem::path ckpt_root = checkpoint_root(cfg.output);
  const std::string metrics_path = (output / kMetricsFile).string();
  if (leader) std::filesystem::create_directories(output);
  comm.barrier();
  if (leader && !start.reason.empty()) spdlog::info("{}", start.reason);
  // A checkpoint of this output is not written again at the end. One from elsewhere is (even
  // after no step), which re-splits a checkpoint for another number of ranks.
  const bool own_checkpoint = start.kind == StartKind::continue_run;

  const RunInfo info = describe_run(cfg, comm, backend, command_line);
  // metrics.h5 is opened once the run is set up (an out-of-memory set-up is recorded too): a
  // continued run keeps its rows up to the step it continues from.
  std::optional<MetricsWriter> metrics;
  const auto open_metrics = [&](std::optional<std::int64_t> continued_step) {
    if (!leader) return;
    metrics = own_checkpoint && continued_step
                  ? MetricsWriter::resume(metrics_path, cfg, info, *continued_step)
                  : MetricsWriter::create(metrics_path, cfg, info);
  };

  MemoryLedger& ledger = backend.allocator().ledger();
  std::unique_ptr<TrainingRun> run;
  std::optional<std::int64_t> resumed_step;
  try {
    run = std::make_unique<TrainingRun>(cfg, comm, backend);
    if (!start.candidates.newest_first.empty()) {
      const ResumedCheckpoint resumed =
          read_first_readable(comm, start.candidates, run->checkpoint_request(), leader);
      run->restore(resumed);
      resumed_step = run->step();
      if (leader) {
        spdlog::info("resumed from {} at step {}", resumed.info.path.string(), run->step());
        if (const std::string changed = describe_changed_keys(resumed, cfg); !changed.empty())
          spdlog::warn("{}", changed);
      }
      // Checkpoints of this step and later ones may then replace what `latest` named.
      if (leader && own_checkpoint && resumed.latest_outdated)
        replace_file_atomically(ckpt_root / "latest", resumed.info.path.filename().string() +
                                                          "\n");
    } else if (!cfg.pretrained.empty()) {
      run->take_pretrained_backbone(leader);
    }
    if (leader) {
      if (cfg.fp16) spdlog::info("fp16: {}", run->describe_precision());
      spdlog::info("learning rate: {}; {}", run->schedule().base_lr_origin(),
                   run->schedule().describe());
    }
  } catch (const OutOfMemoryError& e) {
    const auto& newest = start.candidates.newest_first;
    open_metrics(newest.empty() ? std::nullopt : std::optional(newest.front().step));
    if (metrics)
      metrics->finish({"out_of_memory", e.what(), e.needed_bytes(), e.available_bytes()});
    throw;
  }
  open_metrics(resumed_step);

  TrainerRun result;
  result.metrics_path = metrics_path;
  // Samples per optimiser step.
  const std::int64_t global_batch = cfg.batch_size * comm.world_size() * cfg.gradient_acc;
  double loss_sum = 0;
  std::int64_t interval_steps = 0;
  double comm_mark = comm.modelled_seconds();  // modelled comm time when the interval began
  MemoryPeaks interval_peaks{};  // each purpose's peak over the steps since the last log line
  auto interval_start = Clock::now();
  const auto run_start = Clock::now();
  const std::int64_t first_step = run->step();
  std::int64_t last_saved = own_checkpoint ? run->step() : -1;
  DivergenceMonitor divergence(cfg.divergence_steps);

  try {
    while (run->step() < run->last_step()) {
      check_injected_fault(fault, comm.rank(), run->step() + 1);
      ledger.reset_peak();
      const auto step_start = Clock::now();
      const double loss = run->train_step();
      loss_sum += loss;
      backend.synchronize();
      const double step_time = seconds_since(step_start);
      ++interval_steps;
      const MemorySnapshot snapshot = ledger.snapshot();
      for (std::size_t p = 0; p < kMemoryPurposeCount; ++p)
        interval_peaks[p] = std::max(interval_peaks[p], snapshot.peak_by_purpose[p]);

      const bool log_now = run->step() % cfg.frequent == 0 || run->step() == run->last_step();
      if (log_now) {
        const RankFigures figures = gather_figures(comm, step_time, snapshot, interval_peaks,
                                                   run->skipped_records(), emulated);
        const double elapsed = seconds_since(interval_start);
        const double speed = static_cast<double>(interval_steps * global_batch) / elapsed;
        const double mean_loss = loss_sum / static_cast<double>(interval_steps);
        if (leader) {
          log_progress(progress_line(
              {speed, mean_loss, run->last_lr(), run->epoch(), run->step(),
               run->scales_loss() ? std::optional<double>(run->loss_scale()) : std::nullopt,
               hours_left(seconds_since(run_start), run->step() - first_step,
                          run->last_step() - run->step())}));
          StepMetrics row;
          row.step = run->step();
          row.wall_time_s = seconds_since(run_start);
          row.loss = mean_loss;
          row.lr = run->last_lr();
          row.loss_scale = run->loss_scale();
          row.samples_per_s = speed;
          row.comm_time_s =
              (comm.modelled_seconds() - comm_mark) / static_cast<double>(interval_steps);
          row.skipped_records = figures.skipped_records;
          row.step_time_s = figures.step_time_s;
          row.mem_in_use_bytes = figures.mem_in_use;
          row.mem_peak_bytes = figures.mem_peak;
          metrics->append(row);
          metrics->record_memory(figures.peak_by_purpose);
          metrics->record_device_overhead(backend.device_overhead_bytes());
        }
        loss_sum = 0;
        interval_steps = 0;
        interval_peaks = {};
        interval_start = Clock::now();
        comm_mark = comm.modelled_seconds();
      }
      divergence.observe(run->step(), loss, run->last_step_applied(),
                         run->loss_scale_at_floor());
      // A verification is preceded by the checkpoint of its step, so that whatever stops it
      // (a GPU out of memory on one rank, which the other ranks cannot carry on without)
      // loses no training: the run continues from here with resume = "auto". With
      // checkpoint_every = 0 that is one checkpoint per `verbose` steps (keep_checkpoints
      // prunes them).
      const bool verify_now = verification.due(run->step(), run->last_step());
      const bool checkpoint_due = cfg.checkpoint_every > 0 &&
                                  run->step() % cfg.checkpoint_every == 0;
      const bool before_verification = verify_now && cfg.checkpoint_every >= 0;
      if ((checkpoint_due || before_verification) && divergence.healthy() &&
          run->step() != last_saved) {
        run->save(ckpt_root);
        last_saved = run->step();
      }
      if (verify_now) {
        const auto verification_start = Clock::now();
        verification.run(run->step(), run->model(), metrics ? &*metrics : nullptr);
        interval_start += Clock::now() - verification_start;  // not training time
      }
      // A stop asked for during the last step finds the run done, not stopped.
      if (run->step() < run->last_step() && agree_to_stop(comm)) {
        result.stopped_by_signal = true;
        break;
      }
    }
    divergence.check_end(run->step());
    if (cfg.checkpoint_every >= 0 && run->step() != last_saved) run->save(ckpt_root);
  } catch (const TrainingDiverged& e) {
    if (metrics) metrics->finish({"diverged", e.what(), 0, 0});
    throw;
  } catch (const UnusableCheckpoint& e) {
    // The weights went out of range before the loss did: diverged just the same.
    const TrainingDiverged diverged(fmt::format("training diverged: {}", e.what()));
    if (metrics) metrics->finish({"diverged", diverged.what(), 0, 0});
    throw diverged;
  } catch (const OutOfMemoryError& e) {
    if (metrics) metrics->finish({"out_of_memory", e.what(), e.needed_bytes(), e.available_bytes()});
    throw;
  } catch (const std::exception& e) {
    if (metrics) metrics->finish({"failed", e.what(), 0, 0});
    throw;
  }
  if (metrics) {
    metrics->finish({"ok", result.stopped_by_signal ? "stopped by signal" : "", 0, 0});
    spdlog::info("metrics: {}", metrics_path);
  }
  result.steps_done = run->step();
  return result;
}

CheckpointInfo write_start_checkpoint(const Config& cfg, Comm& comm, Backend& backend) {
  validate_for_world(cfg, comm.world_size());
  // No batch is drawn, so no dataset need be at hand: the run is set up on synthetic data.
  // The checkpoint records the config as given (source_text), and its data position, the
  // start, is that of every data source.
  Config setup = cfg;
  setup.rec = "synthetic";
  TrainingRun run(setup, comm, backend);
  if (!cfg.pretrained.empty()) run.take_pretrained_backbone(comm.rank() == 0);
  return run.save(checkpoint_root(cfg.output));
}

StepsMemory measure_steps(const Config& cfg, Comm& comm, Backend& backend, std::int64_t steps,
                          const std::function<void(std::int64_t)>& on_step_end) {
  MemoryLedger& ledger = backend.allocator().ledger();
  ledger.reset_peak();
  TrainingRun run(cfg, comm, backend);
  const MemorySnapshot setup = ledger.snapshot();
  StepsMemory m;
  m.setup_peaks = setup.peak_by_purpose;
  m.setup_peak = setup.total_peak;
  m.checkpoint = run.checkpoint_cost();
  if (on_step_end) on_step_end(0);
  for (std::int64_t n = 1; n <= steps; ++n) {
    ledger.reset_peak();
    run.train_step();
    backend.synchronize();
    const MemorySnapshot s = ledger.snapshot();
    for (std::size_t p = 0; p < kMemoryPurposeCount; ++p)
      m.step_peaks[p] = std::max(m.step_peaks[p], s.peak_by_purpose[p]);
    m.step_peak = std::max(m.step_peak, s.total_peak);
    if (on_step_end) on_step_end(n);
  }
  return m;
}

}  // namespace pfc
