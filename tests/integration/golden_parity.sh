#!/usr/bin/env bash
# arcface_torch's training semantics (tests/golden/arcface_torch_parity_f64.h5) on the CPU:
# two SGD steps, two AdamW steps and one step of two summed micro-batches through the
# trainer's own step, and inter-class filtering, each tensor compared with arcface_torch's
# exact values by the precision's rule (fp64: within 1e-10; fp32: within max(1e-4, 4 x
# arcface_torch's own fp32 error), the median ratio at most 1).
# `golden_parity.sh` (CI): every case on 1 rank in fp32 and fp64, the training cases on 2
# ranks in fp32, the filtering on 2, 3 and 4. `golden_parity.sh all` (slow): every case on 1,
# 2, 3 and 4 ranks in both precisions — each rank runs the whole backbone (every rank feeds the
# whole batch), so that costs minutes.
set -euo pipefail
golden=${PFC_GOLDEN_PARITY:?}
[ -f "$golden" ] || { echo "no golden file at $golden (tests/golden)"; exit 1; }
training=(tiny/sgd_2steps tiny/adamw_2steps tiny/sgd_acc2)
filtering=tiny/arcface_filter0.1_sr1

check() {  # check RANKS PRECISION CASE...: pfc golden; prints each case's summary
  local ranks=$1 precision=$2
  shift 2
  local cases=()
  for c in "$@"; do cases+=(--case "$c"); done
  local out
  out=$(mpiexec -n "$ranks" "$PFC" golden "$golden" "${cases[@]}" --device cpu \
        --precision "$precision") || { echo "$out"; exit 1; }
  echo "$out" | grep -E "ranks?;|compared|^worst|median"
}

if [ "${1:-}" = all ]; then
  for k in 1 2 3 4; do
    for precision in fp32 fp64; do check "$k" "$precision" "${training[@]}" "$filtering"; done
  done
else
  for precision in fp32 fp64; do check 1 "$precision" "${training[@]}" "$filtering"; done
  check 2 fp32 tiny/adamw_2steps tiny/sgd_acc2 "$filtering"
  check 3 fp32 "$filtering"
  check 4 fp32 "$filtering"
fi
