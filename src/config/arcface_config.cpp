#include "config/arcface_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include "config/config_keys.h"
#include "config/format_config_value.h"
#include "config/python_assignments.h"
#include "config/read_config_file.h"
#include "core/error.h"

namespace pfc {

namespace {

namespace fs = std::filesystem;

// arcface_torch keys with no meaning in pfc, and why.
struct DroppedKey {
  std::string_view key;
  std::string_view why;
};
constexpr DroppedKey kDropped[] = {
    {"dali", "pfc's own JPEG pipeline replaces DALI"},
    {"dali_aug", "pfc's own JPEG pipeline replaces DALI"},
    {"save_all_states", "pfc always checkpoints every state"},
    {"wandb_key", "pfc logs to metrics.h5, not Weights & Biases"},
    {"wandb_entity", "pfc logs to metrics.h5, not Weights & Biases"},
    {"wandb_project", "pfc logs to metrics.h5, not Weights & Biases"},
    {"wandb_log_all", "pfc logs to metrics.h5, not Weights & Biases"},
    {"wandb_resume", "pfc logs to metrics.h5, not Weights & Biases"},
    {"using_wandb", "pfc logs to metrics.h5, not Weights & Biases"},
    {"suffix_run_name", "pfc logs to metrics.h5, not Weights & Biases"},
    {"save_artifacts", "pfc logs to metrics.h5, not Weights & Biases"},
};

const DroppedKey* dropped(std::string_view key) {
  for (const DroppedKey& d : kDropped)
    if (d.key == key) return &d;
  return nullptr;
}

// A key's final value and the place that set it.
struct Setting {
  PyValue value;
  std::string where;
  int order = 0;  // base.py's lines first, then the file's
};

using Settings = std::map<std::string, Setting, std::less<>>;

void read_into(Settings& settings, const fs::path& file, int& order) {
  const std::string origin = file.string();
  for (PythonAssignment& a : read_python_assignments(read_config_file(origin), origin))
    settings[a.key] = {std::move(a.value), fmt::format("{}:{}", origin, a.line), order++};
}

// The value as TOML text (Python's tuples and lists are TOML arrays).
std::string toml_literal(const PyValue& v, const std::string& key, const std::string& where) {
  switch (v.kind) {
    case PyValue::Kind::boolean: return v.boolean ? "true" : "false";
    case PyValue::Kind::integer: return fmt::format("{}", v.integer);
    case PyValue::Kind::floating: return toml_float(v.floating);
    case PyValue::Kind::string: return toml_string(v.string);
    case PyValue::Kind::list:
    case PyValue::Kind::tuple: {
      std::vector<std::string> items;
      for (const PyValue& item : v.items) items.push_back(toml_literal(item, key, where));
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
    case PyValue::Kind::none: break;
  }
  throw UsageError(fmt::format("key '{}' in {} is None; pfc needs a value for it", key, where));
}

PyValue string_value(std::string s) {
  PyValue v;
  v.kind = PyValue::Kind::string;
  v.string = std::move(s);
  return v;
}

PyValue margins(double m1, double m2, double m3) {
  PyValue v;
  v.kind = PyValue::Kind::tuple;
  for (double m : {m1, m2, m3}) {
    PyValue item;
    item.kind = PyValue::Kind::floating;
    item.floating = m;
    v.items.push_back(item);
  }
  return v;
}

// Renames `from` to `to` (keeping the later of the two when both are set).
void rename(Settings& settings, std::string_view from, std::string to) {
  const auto it = settings.find(from);
  if (it == settings.end()) return;
  Setting moved = std::move(it->second);
  settings.erase(it);
  const auto existing = settings.find(to);
  if (existing == settings.end() || existing->second.order < moved.order)
    settings[std::move(to)] = std::move(moved);
}

// The translations of the file header, in place; returns the notes for the log.
std::vector<std::string> translate(Settings& settings, const fs::path& file) {
  std::vector<std::string> notes;

  std::vector<std::string> dropped_keys;
  for (auto it = settings.begin(); it != settings.end();) {
    if (const DroppedKey* d = dropped(it->first)) {
      dropped_keys.push_back(fmt::format("{} ({})", d->key, d->why));
      it = settings.erase(it);
    } else {
      ++it;
    }
  }
  if (!dropped_keys.empty())
    notes.push_back(fmt::format("{}: keys with no meaning in pfc, ignored: {}", file.string(),
                                fmt::join(dropped_keys, "; ")));

  rename(settings, "num_workers", "data_workers");

  if (const auto it = settings.find("loss"); it != settings.end()) {
    const PyValue& loss = it->second.value;
    const std::string where = it->second.where;
    std::optional<PyValue> m;
    if (loss.kind == PyValue::Kind::string && loss.string == "arcface") m = margins(1.0, 0.5, 0.0);
    if (loss.kind == PyValue::Kind::string && loss.string == "cosface") m = margins(1.0, 0.0, 0.4);
    if (!m)
      throw UsageError(fmt::format("key 'loss' in {} is {}; pfc knows \"arcface\" and "
                                   "\"cosface\" (or margin_list)",
                                   where, python_repr(loss)));
    const int order = it->second.order;
    settings.erase(it);
    const auto margin = settings.find("margin_list");
    if (margin == settings.end() || margin->second.order < order)
      settings["margin_list"] = {*m, where, order};
  }

  if (const auto it = settings.find("output");
      it != settings.end() && it->second.value.kind == PyValue::Kind::none)
    it->second.value = string_value((fs::path("work_dirs") / file.stem()).string());

  if (const auto it = settings.find("warmup_epoch");
      it != settings.end() && it->second.value.is_number() && it->second.value.as_double() < 0) {
    notes.push_back(fmt::format("warmup_epoch = {} ({}): no warm-up, as in arcface_torch",
                                python_repr(it->second.value), it->second.where));
    it->second.value.kind = PyValue::Kind::integer;
    it->second.value.integer = 0;
  }

  // train_v2.py applies lr as the config gives it, at any global batch.
  settings["lr_scaling"] = {
      string_value("none"),
      fmt::format("{} (arcface_torch applies lr as given, unscaled by the batch)", file.string()),
      -1};

  // arcface_torch trains on GPUs only.
  settings["device"] = {string_value("cuda"),
                        fmt::format("{} (arcface_torch trains on GPUs)", file.string()), -1};

  // PartialFC_V2 and CombinedMarginLoss, which train_v2.py trains with; a file may still choose.
  const std::string v2 = fmt::format("{} (train_v2.py's PartialFC_V2)", file.string());
  settings.try_emplace("classifier_update", Setting{string_value("dense"), v2, -1});
  settings.try_emplace("margin_gradient", Setting{string_value("straight_through"), v2, -1});
  settings.try_emplace("classifier_precision", Setting{string_value("fp32"), v2, -1});

  const auto decay = settings.find("decay_epoch");
  settings["lr_schedule"] = {
      string_value(decay == settings.end() ? "polynomial_warmup" : "step"),
      decay == settings.end()
          ? fmt::format("{} (no decay_epoch: train_v2.py's PolynomialLRWarmup)", file.string())
          : fmt::format("{} (train.py's step schedule)", decay->second.where),
      -1};
  // train_v2.py builds PolynomialLRWarmup without a power: its default, 1.0, a linear decay.
  if (decay == settings.end()) {
    PyValue power;
    power.kind = PyValue::Kind::floating;
    power.floating = 1.0;
    settings.try_emplace(
        "lr_power",
        Setting{power, fmt::format("{} (PolynomialLRWarmup's default power)", file.string()), -1});
  }

  return notes;
}

}  // namespace

ImportedConfig import_arcface_config(const fs::path& file) {
  const fs::path base = file.parent_path() / "base.py";
  Settings settings;
  int order = 0;
  if (file.filename() == "base.py") {
    read_into(settings, file, order);
  } else {
    if (!fs::exists(base))
      throw UsageError(fmt::format("{} is an arcface_torch config, which is read over base.py "
                                   "beside it (as arcface_torch's get_config does), but {} "
                                   "does not exist; copy arcface_torch's configs/base.py there",
                                   file.string(), base.string()));
    read_into(settings, base, order);
    read_into(settings, file, order);
  }

  ImportedConfig out;
  out.notes = translate(settings, file);

  std::vector<std::pair<std::string, const Setting*>> ordered;
  for (const auto& [key, setting] : settings) ordered.emplace_back(key, &setting);
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.second->order < b.second->order; });
  out.toml_text = fmt::format("# arcface_torch config {}{}, as pfc reads it\n", file.string(),
                              order > 0 && file.filename() != "base.py"
                                  ? fmt::format(" over {}", base.string())
                                  : "");
  for (const std::string& note : out.notes) out.toml_text += fmt::format("# {}\n", note);
  for (const auto& [key, setting] : ordered) {
    out.toml_text += fmt::format("# {}\n{} = {}\n", setting->where, key,
                                 toml_literal(setting->value, key, setting->where));
    out.settings.push_back({key, setting->where});
  }
  out.values = toml::parse(out.toml_text);
  return out;
}

}  // namespace pfc
