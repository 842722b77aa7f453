#include "plan/max_classes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace pfc {

namespace {

class Search {
 public:
  Search(const Config& cfg, Comm& comm, MetaBackend& backend, const PlanRequest& request)
      : cfg_(cfg), comm_(comm), backend_(backend), request_(request) {}

  // The plan's need per rank at `classes`, and whether it fits. After a first plan, a count
  // whose plan throws does not fit: the same config planned at fewer classes, so what refused
  // it is a size the planned backend cannot run (kept in refused()).
  std::pair<std::int64_t, bool> need(std::int64_t classes) {
    Config probe = cfg_;
    probe.num_classes = classes;
    ++plans_;
    try {
      const Plan plan = make_plan(probe, comm_, backend_, request_);
      return {plan.largest().needed_bytes, plan.fits()};
    } catch (const Error& e) {
      if (plans_ == 1) throw;
      if (classes < refused_at_) {
        refused_at_ = classes;
        refused_ = fmt::format("{} classes and more: {}", classes, e.what());
      }
      return {std::numeric_limits<std::int64_t>::max(), false};
    }
  }
  int plans() const { return plans_; }
  const std::string& refused() const { return refused_; }

 private:
  const Config& cfg_;
  Comm& comm_;
  MetaBackend& backend_;
  PlanRequest request_;
  int plans_ = 0;
  std::int64_t refused_at_ = std::numeric_limits<std::int64_t>::max();
  std::string refused_;
};

}  // namespace

MaxClasses largest_num_classes(const Config& cfg, const std::string& storage, Comm& comm,
                               MetaBackend& backend, const PlanRequest& request,
                               double resolution) {
  Config base = cfg;
  base.classifier_storage = storage;
  Search search(base, comm, backend, request);
  MaxClasses out{storage, 0, 0, request.available_bytes, 0, {}};
  // Every rank holds at least one class, and every label rule has its labels (constant
  // synthetic labels are all class 1).
  const std::int64_t smallest =
      std::max<std::int64_t>(2, cfg.method == "dp" ? 1 : comm.world_size());
  auto [need_lo, fits_lo] = search.need(smallest);
  if (!fits_lo) {
    out.needed_bytes = need_lo;
    out.plans = search.plans();
    return out;
  }
  // The need is close to affine in the class count: two plans predict where it meets what is
  // available, and the bracket around that prediction is then narrowed by bisection.
  std::int64_t lo = smallest, hi = 0;
  std::int64_t lo_need = need_lo;
  const std::int64_t probe = smallest * 1024;
  const auto [need_probe, fits_probe] = search.need(probe);
  if (!fits_probe) {
    hi = probe;
  } else {
    lo = probe;
    lo_need = need_probe;
    const double per_class = static_cast<double>(need_probe - need_lo) /
                             static_cast<double>(probe - smallest);
    const double room = static_cast<double>(request.available_bytes - need_probe);
    std::int64_t guess = per_class > 0 ? probe + static_cast<std::int64_t>(room / per_class)
                                       : probe * 2;
    guess = std::max(guess, probe + 1);
    // Margins that grow fourfold step outward from the guess until the bracket closes.
    double margin = resolution;
    const auto [n, fits] = search.need(guess);
    if (fits) {
      lo = guess;
      lo_need = n;
      while (hi == 0) {
        const auto g =
            static_cast<std::int64_t>(std::ceil(static_cast<double>(lo) * (1 + margin)));
        margin *= 4;
        const auto [ng, fits_g] = search.need(g);
        if (fits_g) {
          lo = g;
          lo_need = ng;
        } else {
          hi = g;
        }
      }
    } else {
      hi = guess;
      for (;;) {
        const auto g =
            static_cast<std::int64_t>(std::floor(static_cast<double>(hi) * (1 - margin)));
        margin *= 4;
        if (g <= lo) break;
        const auto [ng, fits_g] = search.need(g);
        if (fits_g) {
          lo = g;
          lo_need = ng;
          break;
        }
        hi = g;
      }
    }
  }
  while (static_cast<double>(hi - lo) > resolution * static_cast<double>(lo) && hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    const auto [n, fits] = search.need(mid);
    if (fits) {
      lo = mid;
      lo_need = n;
    } else {
      hi = mid;
    }
  }
  out.num_classes = lo;
  out.needed_bytes = lo_need;
  out.plans = search.plans();
  out.refused = search.refused();
  return out;
}

std::string describe_max_classes(const std::vector<MaxClasses>& found) {
  std::string text;
  for (const MaxClasses& m : found) {
    if (!text.empty()) text += ", ";
    text += m.num_classes > 0
                ? fmt::format("{} classes with classifier_storage = \"{}\"", m.num_classes,
                              m.storage)
                : fmt::format("none with classifier_storage = \"{}\"", m.storage);
  }
  return text;
}

std::string format_max_classes(const std::vector<MaxClasses>& found, const Config& cfg,
                               const GpuSpec* gpu, int world_size) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const std::string ranks = cfg.emulate_world_size > 0
                                ? fmt::format("rank {} of {} (emulated)", cfg.emulate_rank,
                                              world_size)
                                : fmt::format("{} rank(s)", world_size);
  const std::string method = cfg.method == "pfc" ? fmt::format("pfc {:g}", cfg.sample_rate)
                                                 : cfg.method;
  std::string text = fmt::format(
      "largest num_classes that fits: {}, {}; {}, batch {} per rank, fp16 {}, embedding {}, "
      "method {}, optimizer {}\n",
      gpu ? fmt::format("cuda on {}", gpu->name) : std::string("cpu (this host)"), ranks,
      cfg.network, cfg.batch_size, cfg.fp16 ? "on" : "off", cfg.embedding_size, method,
      cfg.optimizer);
  text += fmt::format("  {:<20}{:>14}{:>16}{:>16}{:>8}\n", "classifier_storage", "num_classes",
                      "needs (GiB)", "available", "plans");
  for (const MaxClasses& m : found)
    text += fmt::format("  {:<20}{:>14}{:>16.2f}{:>16.2f}{:>8}\n", m.storage, m.num_classes,
                        static_cast<double>(m.needed_bytes) / kGiB,
                        static_cast<double>(m.available_bytes) / kGiB, m.plans);
  for (const MaxClasses& m : found)
    if (!m.refused.empty())
      text += fmt::format("  {}: the planned backend refuses {}\n", m.storage, m.refused);
  return text;
}

}  // namespace pfc
