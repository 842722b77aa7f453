#include "pfc/partial_fc.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <span>

#include "optim/classifier_storage.h"
#include "pfc/class_centre_init.h"
#include "pfc/class_sampler.h"
#include "pfc/row_gradient_sum.h"
#include "pfc/shard_gather.h"

namespace pfc {
namespace {

// arcface_torch's floor on the target probability before the logarithm.
constexpr double kMinTargetProb = 1e-30;

ShardLayout layout_for(const PartialFcOptions& o, const Comm& comm) {
  // dp holds every class on every rank: a one-rank split.
  if (o.method == PfcMethod::dp) return ShardLayout::make(o.num_classes, 1, 0, 1.0);
  return ShardLayout::make(o.num_classes, comm.world_size(), comm.rank(),
                           o.method == PfcMethod::pfc ? o.sample_rate : 1.0);
}

}  // namespace

double f16_cos_grad_scale(double scale_s, std::int64_t global_batch, double largest_factor) {
  PFC_CHECK(scale_s > 0.0 && global_batch > 0,
            "f16_cos_grad_scale: scale {} and global batch {} must be positive", scale_s,
            global_batch);
  const double factor = std::isfinite(largest_factor) ? std::max(1.0, largest_factor) : 1.0;
  const double bound = scale_s / static_cast<double>(global_batch) * factor;
  return std::ldexp(1.0, static_cast<int>(std::floor(std::log2(16384.0 / bound))));
}

PartialFc::PartialFc(Backend& backend, Comm& comm, const PartialFcOptions& options)
    : backend_(backend), comm_(comm), options_(options), layout_(layout_for(options, comm)) {
  if (options.embedding_size < 1)
    throw UsageError(fmt::format("embedding_size is {}, expected at least 1",
                                 options.embedding_size));
  PFC_CHECK(options.dtype == DType::f32 || options.dtype == DType::f64,
            "PartialFc: the classifier computes in f32 or f64, not {}", dtype_name(options.dtype));
  PFC_CHECK(options.gemm_operands == options.dtype ||
                (options.gemm_operands == DType::f16 && options.dtype == DType::f32),
            "PartialFc: the GEMM operands of an {} classifier are {}{}, not {}",
            dtype_name(options.dtype), dtype_name(options.dtype),
            options.dtype == DType::f32 ? " or f16" : "", dtype_name(options.gemm_operands));
  const double threshold = options.interclass_filtering_threshold;
  if (!(threshold >= 0.0 && threshold < 1.0))
    throw UsageError(fmt::format("interclass_filtering_threshold is {}, expected a value in "
                                 "[0, 1) (0: no filtering)",
                                 threshold));
  PFC_CHECK(options.storage == DType::f32 || is_16bit_float(options.storage),
            "PartialFc: the centres are stored in f32, f16 or bf16, not {}",
            dtype_name(options.storage));
  const DType stored = stored_weight_type(options.storage, options.dtype);
  weight_ = backend_.empty({layout_.num_local, options.embedding_size}, stored,
                           MemoryPurpose::weights);
  init_class_centres(backend_, weight_, layout_.class_start, options.seed);
  optimizer_ = make_optimizer(options.optimizer);
  state_ = optimizer_->zero_state(backend_, weight_.shape(),
                                  stored_moment_type(stored, options.optimizer.kind));
  state_.rounding_seed = options.seed;
  state_.first_row = layout_.class_start;
}

bool PartialFc::counts_classes_only() const {
  return backend_.device() == DeviceKind::meta && !injected_;
}

void PartialFc::set_global_weight(const Tensor& global) {
  check_shape(global, {options_.num_classes, options_.embedding_size},
              "PartialFc::set_global_weight", "global");
  backend_.copy_cast(global.rows(layout_.class_start, layout_.class_end()), weight_);
}

Tensor PartialFc::gather_global_weight() {
  if (options_.method == PfcMethod::dp) return backend_.to_host(weight_);
  return gather_class_shards(backend_, comm_, layout_, weight_);
}

void PartialFc::inject_sampled_classes(std::vector<std::int64_t> global_index) {
  if (options_.method != PfcMethod::pfc)
    throw UsageError(fmt::format("injected sampled classes need method pfc, not {}",
                                 pfc_method_name(options_.method)));
  injected_ = std::move(global_index);
}

void PartialFc::clear_injected_classes() { injected_.reset(); }

void PartialFc::set_labels(const Tensor& labels) {
  const char* op = "PartialFc::set_labels";
  labels_pending_ = false;  // until this batch's labels are gathered and checked
  PFC_CHECK(labels.defined() && labels.device() == DeviceKind::cpu && labels.rank() == 1,
            "{}: labels must be a host vector", op);
  check_dtype(labels, DType::i64, op, "labels");
  const std::int64_t batch = labels.dim(0);
  check_batch_sizes(batch);
  const Tensor host = comm_.all_gather_host(labels);
  const std::int64_t* p = host.data<std::int64_t>();
  global_labels_.assign(p, p + host.numel());
  check_labels(global_labels_, batch);
  labels_pending_ = true;
}

double PartialFc::forward_backward(const Tensor& embeddings, const Tensor& labels,
                                   Tensor& embeddings_grad, std::int64_t draw,
                                   CentreGradient mode) {
  set_labels(labels);
  return forward_backward(embeddings, embeddings_grad, draw, mode);
}

double PartialFc::forward_backward(const Tensor& embeddings, Tensor& embeddings_grad,
                                   std::int64_t draw, CentreGradient mode) {
  const char* op = "PartialFc::forward_backward";
  PFC_CHECK(labels_pending_, "{}: no labels for this step (call set_labels first)", op);
  const std::int64_t emb = options_.embedding_size;
  PFC_CHECK(embeddings.defined() && embeddings.rank() == 2 && embeddings.dim(1) == emb,
            "{}: embeddings {} must be [batch, {}]", op, embeddings.describe(), emb);
  check_dtype(embeddings, options_.dtype, op, "embeddings");
  PFC_CHECK(embeddings.device() == backend_.device(),
            "{}: embeddings must be on the {} backend's device", op, backend_.name());
  const std::int64_t batch = embeddings.dim(0);
  const std::int64_t global_batch = static_cast<std::int64_t>(global_labels_.size());
  PFC_CHECK(batch * comm_.world_size() == global_batch,
            "{}: {} embeddings per rank, but the labels set hold {} per rank", op, batch,
            global_batch / comm_.world_size());
  if (!embeddings_grad.defined())
    embeddings_grad = backend_.empty({batch, emb}, options_.dtype, MemoryPurpose::gradients);
  check_shape(embeddings_grad, {batch, emb}, op, "embeddings_grad");
  check_dtype(embeddings_grad, options_.dtype, op, "embeddings_grad");

  labels_pending_ = false;
  if (mode == CentreGradient::replace) grad_pending_ = false;
  if (options_.method == PfcMethod::dp) {
    const auto first = global_labels_.begin() + comm_.rank() * batch;
    return data_parallel_step(embeddings, std::vector<std::int64_t>(first, first + batch),
                              embeddings_grad, global_batch, mode);
  }
  return sharded_step(embeddings, global_labels_, embeddings_grad, draw, mode);
}

void PartialFc::check_batch_sizes(std::int64_t batch) {
  // Every rank sees the same two sums, so all of them stop here together, instead of some
  // entering an all-gather of mismatched sizes.
  const double b = static_cast<double>(batch);
  const double total = comm_.all_reduce_scalar(b, ReduceOp::sum);
  const double largest = comm_.all_reduce_scalar(b, ReduceOp::max);
  PFC_CHECK(total == largest * comm_.world_size(),
            "PartialFc: the ranks' batch sizes differ (rank {} has {}, the largest is {}, the "
            "sum {}); every rank must pass the same batch size",
            comm_.rank(), batch, largest, total);
}

void PartialFc::check_labels(const std::vector<std::int64_t>& global_labels,
                             std::int64_t batch) const {
  for (std::size_t i = 0; i < global_labels.size(); ++i) {
    const std::int64_t label = global_labels[i];
    if (label < 0 || label >= options_.num_classes)
      throw Error(fmt::format(
          "label {} of sample {} on rank {} is outside the classes [0, {}) of num_classes",
          label, static_cast<std::int64_t>(i) % batch, static_cast<std::int64_t>(i) / batch,
          options_.num_classes));
  }
}

double PartialFc::largest_magnitude(const Tensor& factor) {
  if (!factor.defined() || factor.numel() == 0) return 1.0;
  const Tensor host = backend_.to_host(factor);
  const bool f64 = factor.dtype() == DType::f64;
  double largest = 0.0;
  for (std::int64_t i = 0; i < host.numel(); ++i) {
    const double f = std::abs(f64 ? host.data<double>()[i] : host.data<float>()[i]);
    // A NaN factor makes the gradient NaN whatever the scale: as an infinite one.
    largest = std::isnan(f) ? HUGE_VAL : std::max(largest, f);
  }
  return largest;
}

Tensor PartialFc::to_half(const Tensor& x) {
  Tensor half = backend_.empty(x.shape(), DType::f16, MemoryPurpose::activations);
  backend_.cast(x, half);
  return half;
}

PartialFc::HeadGradients PartialFc::margin_softmax(const Tensor& embeddings, Tensor centres,
                                                   const Tensor& local_label,
                                                   std::int64_t global_batch,
                                                   bool class_sharded) {
  const std::int64_t rows = embeddings.dim(0), classes = centres.dim(0);
  const std::int64_t emb = options_.embedding_size;
  auto buffer = [&](const Shape& s, MemoryPurpose p = MemoryPurpose::activations) {
    return backend_.empty(s, options_.dtype, p);
  };
  Tensor en = buffer({rows, emb}), en_norm = buffer({rows});
  backend_.l2_normalize_rows(embeddings, en, en_norm);
  Tensor wn = buffer({classes, emb}), wn_norm = buffer({classes});
  backend_.l2_normalize_rows(centres, wn, wn_norm);
  centres = Tensor();

  const bool half = options_.gemm_operands == DType::f16;
  const Tensor en_operand = half ? to_half(en) : en;
  const Tensor wn_operand = half ? to_half(wn) : wn;

  // Distributed softmax: a class's logit lives on one rank only, so the row max and the row
  // sum of exponentials are reduced over the ranks before they are used.
  Tensor logits = buffer({rows, classes});
  backend_.gemm(false, true, 1.0, en_operand, wn_operand, 0.0, logits);
  // Filtered negatives become the constant 0 (they still count in the softmax, as in
  // arcface_torch) and get no gradient; `keep` remembers them for the backward.
  Tensor keep;
  if (options_.interclass_filtering_threshold > 0.0) {
    keep = backend_.empty({rows, classes}, DType::u8, MemoryPurpose::activations);
    backend_.interclass_filter(logits, local_label, options_.interclass_filtering_threshold,
                               keep);
  }
  // The exact margin gradient's factor needs the target cosines the margin overwrites.
  Tensor margin_factor;
  if (options_.margin_gradient == MarginGradient::exact) {
    margin_factor = buffer({rows});
    backend_.margin_gradient_factor(logits, local_label, options_.margin, margin_factor);
  }
  Tensor row_max = buffer({rows});
  backend_.margin_logits(logits, local_label, options_.margin, row_max);
  if (class_sharded) comm_.all_reduce(row_max, ReduceOp::max);
  Tensor row_sum = buffer({rows});
  backend_.exp_and_row_sum(logits, row_max, row_sum);
  if (class_sharded) comm_.all_reduce(row_sum, ReduceOp::sum);
  Tensor target_prob = buffer({rows});
  // In f16, d loss / d cos leaves the softmax already multiplied by its f16 scale (one pass
  // fewer over the logits); the GEMMs below take the scale back out through alpha.
  const double grad_scale =
      half ? f16_cos_grad_scale(options_.margin.scale, global_batch,
                                largest_magnitude(margin_factor))
           : 1.0;
  backend_.softmax_grad(logits, row_sum, local_label, options_.margin.scale * grad_scale,
                        global_batch, target_prob);
  if (margin_factor.defined()) backend_.scale_target_column(logits, local_label, margin_factor);
  margin_factor = Tensor();
  if (keep.defined()) backend_.interclass_filter_backward(logits, keep);
  keep = Tensor();
  // Each target is on exactly one rank; the others contribute 0.
  if (class_sharded) comm_.all_reduce(target_prob, ReduceOp::sum);

  HeadGradients out;
  const Tensor prob_host = backend_.to_host(target_prob);
  const bool f64 = options_.dtype == DType::f64;
  for (std::int64_t r = 0; r < rows; ++r) {
    const double p = f64 ? prob_host.data<double>()[r] : prob_host.data<float>()[r];
    out.loss_sum -= std::log(std::max(p, kMinTargetProb));
  }

  // logits now holds d loss / d cos (times grad_scale). Through cos = En Wn^T, then the two
  // normalisations.
  Tensor dcos = std::move(logits);
  if (half) dcos = to_half(dcos);
  const double unscale = 1.0 / grad_scale;
  Tensor d_en = buffer({rows, emb});
  backend_.gemm(false, false, unscale, dcos, wn_operand, 0.0, d_en);
  // The centres' gradient takes the place of d loss / d Wn (in place: one [classes, emb]
  // buffer fewer at the step's peak).
  Tensor d_wn = buffer({classes, emb}, MemoryPurpose::gradients);
  backend_.gemm(true, false, unscale, dcos, en_operand, 0.0, d_wn);
  dcos = Tensor();
  out.embeddings_grad = buffer({rows, emb});
  backend_.l2_normalize_rows_backward(d_en, en, en_norm, out.embeddings_grad);
  backend_.l2_normalize_rows_backward(d_wn, wn, wn_norm, d_wn);
  out.weight_grad = std::move(d_wn);
  return out;
}

double PartialFc::data_parallel_step(const Tensor& embeddings, std::vector<std::int64_t> labels,
                                     Tensor& embeddings_grad, std::int64_t global_batch,
                                     CentreGradient mode) {
  // Each rank scores its own samples against every class; the global batch's loss and
  // centre gradient are sums over ranks (the gradient's all-reduce is what makes dp costly).
  Tensor local_label = index_on_backend(backend_, labels, MemoryPurpose::workspace);
  HeadGradients g = margin_softmax(embeddings, weight_, local_label, global_batch, false);
  backend_.copy(g.embeddings_grad, embeddings_grad);
  comm_.all_reduce(g.weight_grad, ReduceOp::sum);
  keep_weight_grad(std::move(g.weight_grad), {}, Tensor(), mode);
  return comm_.all_reduce_scalar(g.loss_sum, ReduceOp::sum) / static_cast<double>(global_batch);
}

double PartialFc::sharded_step(const Tensor& embeddings,
                               const std::vector<std::int64_t>& global_labels,
                               Tensor& embeddings_grad, std::int64_t draw, CentreGradient mode) {
  const std::int64_t global_batch = static_cast<std::int64_t>(global_labels.size());
  Tensor total = backend_.empty({global_batch, options_.embedding_size}, options_.dtype,
                                MemoryPurpose::comm);
  comm_.all_gather(embeddings, total);

  std::vector<std::int64_t> local_labels;
  std::vector<std::int64_t> sampled;
  Tensor sampled_device;
  Tensor centres;
  if (options_.method == PfcMethod::mp) {
    local_labels = shard_local_labels(global_labels, layout_);
    centres = weight_;
  } else if (counts_classes_only()) {
    // A plan draws no classes: as many rows as a draw takes, with no index, so that its time
    // and host memory do not grow with the shard. The labels' values are never read there.
    const std::int64_t rows = sample_size(global_labels, layout_);
    sampled_device = planned_index_on_backend(backend_, rows, MemoryPurpose::workspace);
    local_labels = shard_local_labels(global_labels, layout_);
    centres = backend_.empty({rows, options_.embedding_size}, weight_.dtype(),
                             MemoryPurpose::activations);
    backend_.gather_rows(weight_, sampled_device, centres);
  } else {
    ClassSample s = injected_
                        ? injected_classes(global_labels, layout_, *injected_)
                        : sample_classes(global_labels, layout_,
                                         sampler_key(options_.seed, draw, layout_.rank));
    sampled = std::move(s.index);
    local_labels = std::move(s.local_label);
    sampled_device = index_on_backend(backend_, sampled, MemoryPurpose::workspace);
    // In the stored type: 16-bit rows are read into the compute type as they are normalised.
    centres = backend_.empty({static_cast<std::int64_t>(sampled.size()),
                              options_.embedding_size},
                             weight_.dtype(), MemoryPurpose::activations);
    backend_.gather_rows(weight_, sampled_device, centres);
  }
  Tensor local_label = index_on_backend(backend_, local_labels, MemoryPurpose::workspace);
  HeadGradients g = margin_softmax(total, std::move(centres), local_label, global_batch, true);
  // Every rank holds a part of each sample's gradient (its classes' share): the sum goes
  // back to the rank that owns the sample.
  comm_.reduce_scatter(g.embeddings_grad, embeddings_grad, ReduceOp::sum);
  keep_weight_grad(std::move(g.weight_grad), std::move(sampled), std::move(sampled_device), mode);
  // Every rank saw the same all-reduced target probabilities: the loss needs no collective.
  return g.loss_sum / static_cast<double>(global_batch);
}

void PartialFc::keep_weight_grad(Tensor grad, std::vector<std::int64_t> sampled,
                                 Tensor sampled_device, CentreGradient mode) {
  if (mode == CentreGradient::accumulate && grad_pending_) {
    if (options_.method == PfcMethod::pfc) {
      const RowGradient pending{sampled_, sampled_device_, weight_grad_};
      const RowGradient more{std::move(sampled), std::move(sampled_device), grad};
      RowGradient sum = counts_classes_only()
                            ? planned_row_gradient_sum(backend_, pending, more, layout_.num_local)
                            : sum_row_gradients(backend_, pending, more);
      sampled_ = std::move(sum.index);
      sampled_device_ = std::move(sum.device_index);
      weight_grad_ = std::move(sum.rows);
    } else {
      backend_.axpy(1.0, grad, weight_grad_);
    }
  } else {
    sampled_ = std::move(sampled);
    sampled_device_ = std::move(sampled_device);
    weight_grad_ = std::move(grad);
  }
  grad_pending_ = true;
}

void PartialFc::step(double lr) {
  PFC_CHECK(grad_pending_, "PartialFc::step: no gradient since the last step (call "
            "forward_backward first)");
  if (options_.method == PfcMethod::pfc) {
    // Even with no rows sampled here, so that every rank's update count stays the same.
    optimizer_->update_rows(backend_, weight_, sampled_device_, weight_grad_, state_, lr,
                            options_.classifier_update);
  } else {
    optimizer_->update(backend_, weight_, weight_grad_, state_, lr, true);
  }
  grad_pending_ = false;
  // Held until the next step's gradient replaced it, it would sit beside that one at the peak.
  weight_grad_ = Tensor();
  sampled_device_ = Tensor();
}

std::vector<std::int64_t> PartialFc::sampled_index() const {
  if (options_.method == PfcMethod::pfc) return sampled_;
  std::vector<std::int64_t> all(static_cast<std::size_t>(layout_.num_local));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

Tensor PartialFc::shard_weight_grad() {
  PFC_CHECK(weight_grad_.defined(), "PartialFc: no gradient yet (call forward_backward first)");
  if (options_.method != PfcMethod::pfc) return weight_grad_;
  Tensor full = backend_.zeros(weight_.shape(), options_.dtype, MemoryPurpose::gradients);
  if (!sampled_.empty()) backend_.scatter_rows(weight_grad_, sampled_device_, full);
  return full;
}

Tensor PartialFc::gather_global_weight_grad() {
  Tensor shard = shard_weight_grad();
  if (options_.method == PfcMethod::dp) return backend_.to_host(shard);
  return gather_class_shards(backend_, comm_, layout_, shard);
}

}  // namespace pfc
