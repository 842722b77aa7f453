#!/usr/bin/env bash
# `pfc train` refuses a bad config before doing anything else: exit code 2 and a message
# that names the key, the file or the override (and `pfc golden` a tolerance that is
# not a positive number; a job of more ranks than classes, or a PFC_FAULT for a rank it
# lacks). Skipped (77) until the executable has a train command.
set -uo pipefail

if [ -z "${PFC:-}" ] || [ ! -x "$PFC" ] || ! "$PFC" train --help >/dev/null 2>&1; then
  echo "skipped: ${PFC:-\$PFC} is missing or has no train command"
  exit 77
fi

. "$(dirname "${BASH_SOURCE[0]}")/check_support.sh"
source_dir="${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
smoke="$source_dir/input/smoke.toml"

# expect_usage_error NAME PATTERN... -- ARGS...: `pfc train ARGS` exits 2 and says every
# PATTERN (fixed strings).
expect_usage_error() {
  local all=("$@") dashes=0
  while [ "${all[$dashes]}" != "--" ]; do dashes=$((dashes + 1)); done
  expect_exit 2 "${all[@]:0:dashes+1}" "$PFC" train "${all[@]:dashes+1}"
}

printf '# a typo\nbatchsize = 8\n' >"$work/unknown_key.toml"
expect_usage_error unknown_key "unknown key 'batchsize'" "$work/unknown_key.toml:2" \
  "did you mean 'batch_size'?" -- "$work/unknown_key.toml"

printf 'lr = "fast"\n' >"$work/wrong_type.toml"
expect_usage_error wrong_type "key 'lr'" "$work/wrong_type.toml:1" "must be a number" \
  'got string "fast"' -- "$work/wrong_type.toml"

printf 'batch_size = 0\n' >"$work/out_of_range.toml"
expect_usage_error out_of_range "key 'batch_size'" "$work/out_of_range.toml:1" "must be >= 1" \
  -- "$work/out_of_range.toml"

expect_usage_error missing_file "$work/no_such.toml" "does not exist" -- "$work/no_such.toml"

expect_usage_error bad_set "malformed --set 'lr'" "expected key=value" -- "$smoke" --set lr

expect_usage_error set_unknown_key "unknown key 'sample_rte'" "did you mean 'sample_rate'?" \
  -- "$smoke" --set sample_rte=0.1

expect_usage_error set_out_of_range "key 'momentum'" "--set momentum=1" "in [0, 1)" \
  -- "$smoke" --set momentum=1

expect_usage_error unknown_optimizer "key 'optimizer'" "--set optimizer=lamb" \
  "must be one of sgd|adamw" -- "$smoke" --set optimizer=lamb

printf 'gradient_acc = 0\n' >"$work/gradient_acc.toml"
expect_usage_error gradient_acc "key 'gradient_acc'" "$work/gradient_acc.toml:1" "must be >= 1" \
  -- "$work/gradient_acc.toml"

expect_usage_error filter_threshold "key 'interclass_filtering_threshold'" \
  "--set interclass_filtering_threshold=1.0" "in [0, 1)" \
  -- "$smoke" --set interclass_filtering_threshold=1.0

expect_usage_error lr_scaling "key 'lr_scaling'" "must be one of batch/512|none" \
  -- "$smoke" --set 'lr_scaling="linear"'

# A checkpoint holds one optimiser's state: resuming it with the other is refused by name, and
# the run's earlier output stays.
if ! "$PFC" train "$smoke" --set steps=1 --set output=\"$work/sgd_run\" >"$work/sgd_run.log" 2>&1
then
  fail "sgd_run: the one-step run failed"
  cat "$work/sgd_run.log"
fi
expect_usage_error resume_other_optimizer "optimizer = \"sgd\"" "optimizer = \"adamw\"" \
  -- "$smoke" --set steps=2 --set output=\"$work/sgd_run\" --set resume=true \
  --set 'optimizer="adamw"'
[ -f "$work/sgd_run/ckpt/step_0000001/model.h5" ] ||
  fail "resume_other_optimizer: the checkpoint is gone"

expect_usage_error set_beyond_int64 "key 'batch_size'" "which is out of range" \
  -- "$smoke" --set batch_size=99999999999999999999

# An empty file would train the defaults' million classes: said before anything else.
: >"$work/empty.toml"
expect_usage_error empty_config "empty.toml sets no key: every key not given by --set keeps" \
  "num_classes = 1000000" -- "$work/empty.toml" --set batch_size=0

for tolerance in -1 nan 0; do
  expect_exit 2 "golden_tolerance_$tolerance" "must be a positive finite number, got $tolerance" \
    -- "$PFC" golden "$smoke" --case tiny/arcface_sr1 --tolerance "$tolerance"
done
# What only the running job knows: its number of ranks.
if command -v mpiexec >/dev/null; then
  expect_exit 2 classes_below_ranks "num_classes = 1 must be at least the number of ranks, 2" \
    -- mpiexec -n 2 "$PFC" train "$smoke" --set num_classes=1 --set output=\"$work/one\"
  expect_exit 2 fault_rank_beyond_world "PFC_FAULT names rank 9, but this run has 2 ranks" \
    -- env PFC_FAULT=rank:9,step:2 mpiexec -n 2 "$PFC" train "$smoke" \
    --set output=\"$work/fault\"
  [ ! -e "$work/one/metrics.h5" ] && [ ! -e "$work/fault/metrics.h5" ] ||
    fail "a refused run wrote metrics.h5"
fi

# A Vision Transformer that cannot be built: each is exit 2 naming the key and what is allowed.
expect_usage_error vit_heads 'num_heads = 3 must divide embed_dim = 64' "a divisor of 64" \
  -- "$smoke" --set network=\"vit\" --set embed_dim=64 --set num_heads=3
expect_usage_error vit_image_size "image_size must be 112 (as vit.py) or a multiple of 9" \
  -- "$smoke" --set network=\"vit_t\" --set image_size=96
expect_usage_error vit_mask_ratio "mask_ratio" "in [0, 1)" \
  -- "$smoke" --set network=\"vit\" --set mask_ratio=1.0
expect_usage_error mbf_image_size 'network = "mbf"' "needs image_size = 112" \
  "got image_size = 96 (--set image_size=96)" -- "$smoke" --set network=mbf --set image_size=96

# arcface_torch config files that would crash, hang or exhaust a reader of Python: each is
# exit 2 at once, naming the file and line (timeout: a hang fails instead of waiting).
mkdir -p "$work/configs"
printf 'from easydict import EasyDict as edict\nconfig = edict()\n' >"$work/configs/base.py"
python_config() {  # python_config NAME BODY: configs/NAME.py, the header and BODY
  { printf 'from easydict import EasyDict as edict\nconfig = edict()\n'; printf '%s\n' "$2"; } \
    >"$work/configs/$1.py"
}
python_config deep "config.lr = $(printf '(%.0s' {1..10000})0.1$(printf ')%.0s' {1..10000})"
python_config signs "config.lr = $(printf -- '-%.0s' {1..10000})1"
python_config power "config.num_epoch = 1 ** 9223372036854775807 + 2 ** 9223372036854775807"
python_config repeat 'config.val_targets = ["lfw"] * 4096 * 4096 * 4096'
python_config string_lr 'config.lr = "0.1"'
for name in deep signs; do
  expect_exit 2 "py_$name" "$work/configs/$name.py:3: the value nests more than 100 levels" \
    -- timeout 20 "$PFC" train "$work/configs/$name.py"
done
expect_exit 2 py_power "$work/configs/power.py:3: integer '**' overflows 64 bits" \
  -- timeout 20 "$PFC" train "$work/configs/power.py"
expect_exit 2 py_repeat "$work/configs/repeat.py:3: the value would hold 67108865 items" \
  -- timeout 20 "$PFC" train "$work/configs/repeat.py"
expect_exit 2 py_string_lr "key 'lr' in $work/configs/string_lr.py:3 must be a number" \
  'got string "0.1"' -- timeout 20 "$PFC" train "$work/configs/string_lr.py"

[ "$failures" -eq 0 ] || exit 1
