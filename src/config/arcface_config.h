// arcface_torch's config files (`configs/NAME.py`) read as pfc configs, the way arcface_torch's
// get_config reads them: `base.py` beside the file first, then the file's own keys over it,
// and `output = None` becomes `work_dirs/NAME`. Each file is read by read_python_assignments
// (no Python runs). Its keys are then put in pfc's terms:
//  - keys that mean nothing here are named in one note and dropped: wandb_* and friends (pfc
//    logs to metrics.h5), `dali` (pfc's own JPEG pipeline replaces DALI), `save_all_states`
//    (pfc always checkpoints every state);
//  - `num_workers` is `data_workers`; the old `loss = "arcface" | "cosface"` is its margin_list;
//  - a negative `warmup_epoch` (no warm-up in arcface_torch's schedule) is 0;
//  - the device is cuda (arcface_torch trains on GPUs only; `--set device=cpu` to try one on
//    the CPU backend);
//  - the schedule is train_v2.py's PolynomialLRWarmup (power 1: the first step at the full
//    rate, then warm-up and a linear decay), or the step schedule when the file gives
//    `decay_epoch` (train.py's);
//  - the classifier is train_v2.py's unless the file says otherwise: the dense centre update,
//    the straight-through margin gradient, computed in fp32 (PartialFC_V2(..., fp16=False)).
// Every other key must be one of pfc's (see config_keys.cpp), or the import stops naming it.
#pragma once

#include <toml++/toml.h>

#include <filesystem>
#include <string>
#include <vector>

namespace pfc {

struct ImportedSetting {
  std::string key;    // a pfc key
  std::string where;  // "configs/x.py:12"
};

struct ImportedConfig {
  toml::table values;                     // pfc key -> value
  std::vector<ImportedSetting> settings;  // the keys of `values`, in the order to apply them
  std::vector<std::string> notes;         // what the import dropped or translated, for the log
  std::string toml_text;                  // the same settings as a TOML file
};

// Throws UsageError naming the file and line of anything it cannot take.
ImportedConfig import_arcface_config(const std::filesystem::path& file);

}  // namespace pfc
