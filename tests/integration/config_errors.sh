#!/usr/bin/env bash
# `pfc train` refuses a bad config before doing anything else: exit code 2 and a message on
# stderr that names the key, the file or the override. Skipped (77) until the executable has
# a train command.
set -uo pipefail

if [ -z "${PFC:-}" ] || [ ! -x "$PFC" ] || ! "$PFC" train --help >/dev/null 2>&1; then
  echo "skipped: ${PFC:-\$PFC} is missing or has no train command"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source_dir="${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
smoke="$source_dir/input/smoke.toml"
failures=0

# expect_usage_error NAME PATTERN... -- ARGS...: `pfc train ARGS` exits 2 and stderr holds
# every PATTERN (fixed strings).
expect_usage_error() {
  local name=$1
  shift
  local patterns=()
  while [ "$1" != "--" ]; do
    patterns+=("$1")
    shift
  done
  shift
  local stderr_file="$work/$name.stderr"
  "$PFC" train "$@" >"$work/$name.stdout" 2>"$stderr_file"
  local code=$?
  if [ "$code" -ne 2 ]; then
    echo "FAIL $name: exit code $code, expected 2; stderr:"
    cat "$stderr_file"
    failures=$((failures + 1))
    return
  fi
  for pattern in "${patterns[@]}"; do
    if ! grep -qF -- "$pattern" "$stderr_file"; then
      echo "FAIL $name: stderr lacks '$pattern':"
      cat "$stderr_file"
      failures=$((failures + 1))
      return
    fi
  done
  echo "ok   $name"
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
  echo "FAIL sgd_run: the one-step run failed"
  cat "$work/sgd_run.log"
  failures=$((failures + 1))
fi
expect_usage_error resume_other_optimizer "optimizer = \"sgd\"" "optimizer = \"adamw\"" \
  -- "$smoke" --set steps=2 --set output=\"$work/sgd_run\" --set resume=true \
  --set 'optimizer="adamw"'
[ -f "$work/sgd_run/ckpt/step_0000001/model.h5" ] ||
  { echo "FAIL resume_other_optimizer: the checkpoint is gone"; failures=$((failures + 1)); }

[ "$failures" -eq 0 ] || exit 1
