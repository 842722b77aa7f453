#!/usr/bin/env bash
# Today's learning-rate schedule against arcface_torch_v2_schedule_f64.h5: ten steps of SGD and
# of AdamW on train_v2.py's PolynomialLRWarmup (warm-up 3, total 10, power 1: step 1 at the
# base rate, then 1/3, 2/3, 1, then a linear decay), PartialFC_V2 at sample rate 0.1 with
# dense centres, each step with the classes arcface_torch sampled. Every case on 1 and on 3
# ranks, in fp64 (every tensor within 1e-10) and fp32 (the usual rule); in both, the rate each
# step applied must equal the file's `lrs` (the table's `lrs` row, bound 0).
set -euo pipefail
. "$(dirname "$0")/check_support.sh"
file=${PFC_GOLDEN_SCHEDULE:?}
[ -f "$file" ] || { echo "no golden file at $file"; exit 77; }
cases=(tiny/sgd_poly_warmup3_10steps tiny/adamw_poly_warmup3_10steps)

for ranks in 1 3; do
  for precision in fp64 fp32; do
    args=()
    for c in "${cases[@]}"; do args+=(--case "$c"); done
    if ! out=$(mpiexec -n "$ranks" "$PFC" golden "$file" "${args[@]}" --device cpu \
               --precision "$precision" 2>&1); then
      echo "$out"
      fail "${cases[*]} on $ranks rank(s), $precision: not every tensor within the rule"
      continue
    fi
    echo "$out" | grep -E "ranks?;|^lrs |compared|^worst|median"
    [ "$(echo "$out" | grep -c "compared, 0 failed")" -eq "${#cases[@]}" ] ||
      fail "$ranks rank(s), $precision: a case's table is missing"
    [ "$(echo "$out" | grep -cE "^lrs +10 .*ok")" -eq "${#cases[@]}" ] ||
      fail "$ranks rank(s), $precision: the applied rates were not compared with lrs"
  done
done
[ $failures -eq 0 ]
