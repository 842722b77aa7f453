#include "config/validate_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include "config/config_keys.h"
#include "config/format_config_value.h"
#include "config/network_layers.h"
#include "core/error.h"

namespace pfc {

namespace {

// Names keys in messages: where they were set and what they hold.
class Describer {
 public:
  Describer(const Config& cfg, const ConfigOrigins& origins) : cfg_(cfg), origins_(origins) {}

  // "input/x.toml:3", "--set lr=0.2", or "the default".
  std::string origin(std::string_view name) const {
    const auto it = origins_.find(name);
    return it == origins_.end() ? "the default" : it->second;
  }
  // "in input/x.toml:3", or "(the default)".
  std::string where(std::string_view name) const {
    const auto it = origins_.find(name);
    return it == origins_.end() ? "(the default)" : "in " + it->second;
  }
  std::string value(std::string_view name) const {
    return format_config_value(cfg_, *find_config_key(name));
  }
  // "network = \"custom\" (input/x.toml:2)"
  std::string setting(std::string_view name) const {
    return fmt::format("{} = {} ({})", name, value(name), origin(name));
  }
  std::string key(std::string_view name) const {
    return fmt::format("key '{}' {}", name, where(name));
  }

 private:
  const Config& cfg_;
  const ConfigOrigins& origins_;
};

bool within(const ConfigLimits& l, double v) {
  if (l.min && (l.min->inclusive ? v < l.min->value : v <= l.min->value)) return false;
  if (l.max && (l.max->inclusive ? v > l.max->value : v >= l.max->value)) return false;
  return true;
}

// Whether `value` is one of `choices`, "a|b|c".
bool is_choice(std::string_view choices, std::string_view value) {
  while (true) {
    const std::size_t bar = choices.find('|');
    if (choices.substr(0, bar) == value) return true;
    if (bar == std::string_view::npos) return false;
    choices.remove_prefix(bar + 1);
  }
}

// The problem with one key's value against its limits, if any.
struct LimitCheck {
  const ConfigKey& key;
  const Config& cfg;

  std::optional<std::string> operator()(bool Config::*) const { return std::nullopt; }
  std::optional<std::string> operator()(std::int64_t Config::*m) const {
    return number(static_cast<double>(cfg.*m));
  }
  std::optional<std::string> operator()(double Config::*m) const {
    if (!std::isfinite(cfg.*m)) return std::string("must be a finite number");
    return number(cfg.*m);
  }
  std::optional<std::string> operator()(std::string Config::*m) const {
    const std::string& v = cfg.*m;
    const ConfigLimits& l = key.limits;
    if (l.non_empty && v.empty()) return std::string("must not be empty");
    if (l.choices.empty()) return std::nullopt;
    if (is_choice(l.choices, v)) return std::nullopt;
    return fmt::format("must be one of {}", l.choices);
  }
  std::optional<std::string> operator()(std::vector<std::int64_t> Config::*m) const {
    return elements(cfg.*m);
  }
  std::optional<std::string> operator()(std::vector<double> Config::*m) const {
    return elements(cfg.*m);
  }
  std::optional<std::string> operator()(std::array<double, 3> Config::*m) const {
    return elements(cfg.*m);
  }
  std::optional<std::string> operator()(std::vector<std::string> Config::*m) const {
    const auto& values = cfg.*m;
    if (key.limits.non_empty && std::find(values.begin(), values.end(), "") != values.end())
      return std::string("must not hold an empty string");
    return std::nullopt;
  }
  std::optional<std::string> operator()(ResumeMode Config::*) const { return std::nullopt; }

  std::optional<std::string> number(double v) const {
    if (within(key.limits, v)) return std::nullopt;
    return fmt::format("must be {}", describe_range(key.limits));
  }
  template <typename Range>
  std::optional<std::string> elements(const Range& values) const {
    const ConfigLimits& l = key.limits;
    if (l.length != 0 && std::size(values) != l.length)
      return fmt::format("must have exactly {} elements", l.length);
    for (const auto v : values) {
      if (!std::isfinite(static_cast<double>(v))) return std::string("must hold finite numbers");
      if (!within(l, static_cast<double>(v)))
        return fmt::format("must have every element {}", describe_range(l));
    }
    return std::nullopt;
  }
};

// The rules that involve several keys, or more than a range. Each returns its problem.
using Rule = std::optional<std::string> (*)(const Config&, const Describer&);

// arcface_torch's Vision Transformers cut 9x9 patches.
constexpr std::int64_t kVitPatch = 9;

const Rule kRules[] = {
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (c.network != "custom" || c.layers.size() == 4) return std::nullopt;
      return fmt::format("{} needs layers = 4 positive integers (blocks per stage), got {}",
                         d.setting("network"), d.setting("layers"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (c.image_size % 16 == 0 || network_family(c) == NetworkFamily::vision_transformer)
        return std::nullopt;
      return fmt::format("{} must be a multiple of 16 (four stride-2 stages), got {}",
                         d.key("image_size"), c.image_size);
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (network_family(c) != NetworkFamily::mobilefacenet || c.image_size == 112)
        return std::nullopt;
      return fmt::format("{} needs image_size = 112 (its GDC head is a 7x7 convolution over "
                         "the 7x7 map that four stride-2 stages leave), got {}",
                         d.setting("network"), d.setting("image_size"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (network_family(c) != NetworkFamily::vision_transformer || c.image_size == 112 ||
          c.image_size % kVitPatch == 0)
        return std::nullopt;
      return fmt::format("{} cuts its images into {}x{} patches: image_size must be 112 (as "
                         "vit.py) or a multiple of {}, got {}",
                         d.setting("network"), kVitPatch, kVitPatch, kVitPatch,
                         d.setting("image_size"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (network_family(c) != NetworkFamily::vision_transformer) return std::nullopt;
      const VitShape v = vit_shape(c);
      if (v.embed_dim % v.num_heads == 0) return std::nullopt;
      return fmt::format("{}: num_heads = {} must divide embed_dim = {} (allowed: a divisor of "
                         "{})",
                         d.setting("network"), v.num_heads, v.embed_dim, v.embed_dim);
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (c.method == "pfc" || c.sample_rate == 1.0) return std::nullopt;
      return fmt::format("{} samples class centres, which only method \"pfc\" does, but {}; "
                         "set sample_rate = 1.0 or method = \"pfc\"",
                         d.setting("sample_rate"), d.setting("method"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (c.margin_list[0] == 1.0) return std::nullopt;
      return fmt::format("{} must have m1 = 1.0 (as arcface_torch: no multiplicative margin), "
                         "got {}",
                         d.key("margin_list"), d.value("margin_list"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (c.margin_list[1] == 0.0 || c.margin_list[2] == 0.0) return std::nullopt;
      return fmt::format("{} may set m2 (ArcFace) or m3 (CosFace), not both, got {}",
                         d.key("margin_list"), d.value("margin_list"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (std::adjacent_find(c.decay_epoch.begin(), c.decay_epoch.end(),
                             std::greater_equal<>()) == c.decay_epoch.end())
        return std::nullopt;
      return fmt::format("{} must be strictly ascending, got {}", d.key("decay_epoch"),
                         d.value("decay_epoch"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      // The step schedule has no decay power: a power set for it would go unused.
      if (c.lr_power == 0.0 || c.lr_schedule != "step") return std::nullopt;
      return fmt::format("{} applies to a polynomial lr_schedule; {} decays in steps of x0.1 "
                         "(set lr_power = 0, or lr_schedule = \"polynomial\" or "
                         "\"polynomial_warmup\")",
                         d.setting("lr_power"), d.setting("lr_schedule"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (c.warmup_epoch < static_cast<double>(c.num_epoch)) return std::nullopt;
      return fmt::format("{} must be less than {}", d.setting("warmup_epoch"),
                         d.setting("num_epoch"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (c.emulate_world_size == 0 ? c.emulate_rank == 0
                                    : c.emulate_rank < c.emulate_world_size)
        return std::nullopt;
      return fmt::format("{} must be less than {} (and 0 when not emulating)",
                         d.setting("emulate_rank"), d.setting("emulate_world_size"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      // "auto" with resume_from: the run's own checkpoint when it has one, else resume_from.
      if (c.resume != ResumeMode::on || c.resume_from.empty()) return std::nullopt;
      return fmt::format("{} continues the run in `output` and {} starts a new one from another "
                         "checkpoint: set one of them (resume = \"auto\" does the first when "
                         "`output` has a checkpoint, else the second)",
                         d.setting("resume"), d.setting("resume_from"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (c.pretrained.empty() || c.resume_from.empty()) return std::nullopt;
      return fmt::format("{} starts a new run from a backbone and {} from a whole checkpoint "
                         "(its class centres, optimiser and step too): set one of them",
                         d.setting("pretrained"), d.setting("resume_from"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (c.val_targets.empty() || c.emulate_world_size == 0) return std::nullopt;
      return fmt::format("{} cannot be verified in an emulated run ({}): it plays one rank of "
                         "a world that does not exist; set val_targets = []",
                         d.setting("val_targets"), d.setting("emulate_world_size"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (std::none_of(c.val_targets.begin(), c.val_targets.end(), [](const std::string& n) {
            return n.find('/') != std::string::npos;
          }))
        return std::nullopt;
      return fmt::format("{} names files in `rec` (<rec>/<name>.bin): a name holds no '/'",
                         d.setting("val_targets"));
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      // Every rank of dp holds the whole classifier, f32, with its momentum.
      constexpr double kMostBytes = 9.2e18;  // 2^63
      const double bytes = 4.0 * static_cast<double>(c.num_classes) *
                           static_cast<double>(c.embedding_size);
      if (bytes < kMostBytes) return std::nullopt;
      return fmt::format("{} with {} makes a classifier of {:.3g} bytes, more than a 64-bit byte "
                         "count holds",
                         d.setting("num_classes"), d.setting("embedding_size"), bytes);
    },
    [](const Config& c, const Describer& d) -> std::optional<std::string> {
      if (c.num_classes >= c.emulate_world_size) return std::nullopt;
      return fmt::format("{} must be at least {}: every rank holds a shard of the classes",
                         d.setting("num_classes"), d.setting("emulate_world_size"));
    },
};

}  // namespace

void validate_config(const Config& cfg, const ConfigOrigins& origins) {
  const Describer describe(cfg, origins);
  std::vector<std::string> problems;
  for (const ConfigKey& key : config_keys())
    if (const auto problem = std::visit(LimitCheck{key, cfg}, key.field))
      problems.push_back(fmt::format("{} {}, got {}", describe.key(key.name), *problem,
                                     describe.value(key.name)));
  // Rules assume each key is within its own limits, so they run only when all are.
  if (problems.empty())
    for (const Rule rule : kRules)
      if (const auto problem = rule(cfg, describe)) problems.push_back(*problem);
  if (!problems.empty()) throw UsageError(fmt::format("{}", fmt::join(problems, "\n")));
}

void validate_for_world(const Config& cfg, int world_size) {
  if (cfg.num_classes >= world_size) return;
  throw UsageError(fmt::format("num_classes = {} must be at least the number of ranks, {}: "
                               "every rank holds a shard of the classes",
                               cfg.num_classes, world_size));
}

}  // namespace pfc
