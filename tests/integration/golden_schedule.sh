#!/usr/bin/env bash
# Today's learning-rate schedule against arcface_torch_v2_schedule_f64.h5: ten steps of SGD and
# of AdamW on train_v2.py's PolynomialLRWarmup (warm-up 3, total 10, power 1: step 1 at the
# base rate, then 1/3, 2/3, 1, then a linear decay), PartialFC_V2 at sample rate 0.1 with
# dense centres, each step with the classes arcface_torch sampled, in fp64 (every tensor within
# 1e-10) and fp32 (the usual rule); in both, the rate each step applied must equal the file's
# `lrs` (the table's `lrs` row, bound 0).
# `golden_schedule.sh` (CI): both cases in fp64 and the SGD case in fp32 on 1 rank, the AdamW
# case in fp32 on 2 ranks (every rank runs the whole backbone: k ranks cost k times one).
# `golden_schedule.sh all` (slow): both cases in both precisions on 1 and 3 ranks.
set -euo pipefail
. "$(dirname "$0")/check_support.sh"
file=${PFC_GOLDEN_SCHEDULE:?}
[ -f "$file" ] || { echo "no golden file at $file"; exit 77; }
cases=(tiny/sgd_poly_warmup3_10steps tiny/adamw_poly_warmup3_10steps)

passes() {  # passes RANKS PRECISION CASE...: every case passes, its rates equal to lrs
  local ranks=$1 precision=$2 out
  shift 2
  local args=()
  for c in "$@"; do args+=(--case "$c"); done
  if ! out=$(mpiexec -n "$ranks" "$PFC" golden "$file" "${args[@]}" --device cpu \
             --precision "$precision" 2>&1); then
    echo "$out"
    fail "$* on $ranks rank(s), $precision: not every tensor within the rule"
    return
  fi
  echo "$out" | grep -E "ranks?;|^lrs |compared|^worst|median"
  [ "$(echo "$out" | grep -c "compared, 0 failed")" -eq "$#" ] ||
    fail "$* on $ranks rank(s), $precision: a case's table is missing"
  [ "$(echo "$out" | grep -cE "^lrs +10 .*ok")" -eq "$#" ] ||
    fail "$* on $ranks rank(s), $precision: the applied rates were not compared with lrs"
}

if [ "${1:-}" = all ]; then
  for precision in fp64 fp32; do
    passes 1 "$precision" "${cases[@]}"
    passes 3 "$precision" "${cases[@]}"
  done
else
  passes 1 fp64 "${cases[@]}"
  passes 1 fp32 tiny/sgd_poly_warmup3_10steps
  passes 2 fp32 tiny/adamw_poly_warmup3_10steps
fi
[ $failures -eq 0 ]
