#!/usr/bin/env bash
# Both versions of arcface_torch, several steps at sample rate 0.1 and 0, against their own
# golden files (tests/golden/README.md, "Several steps at sample rate 0.1"):
#  - arcface_torch_seed_f64.h5: the seed's partial_fc.py / losses.py / train.py (sampled
#    centre update with its momentum rows, exact ArcFace gradient);
#  - arcface_torch_v2_dense_f64.h5: today's PartialFC_V2 (dense centre update with SGD and
#    with AdamW, straight-through margin; sample rate 0: positives only).
# Each case runs under the version its file names, through the trainer's own step with the
# classes arcface_torch sampled, by the precision's rule (fp64: within 1e-10; fp32: within
# max(1e-4, 4 x arcface_torch's own fp32 error), the median ratio at most 1).
# Then each file under the other version - the other centre update, and the other margin
# gradient, one at a time - must fail (exit 3): the cases tell the two apart.
# `golden_semantics.sh` (CI): every case on 1 rank in both precisions, the seed's on 2 ranks and
# sample rate 0 on 4 (a rank without positives), the failures on 1 rank.
# `golden_semantics.sh all` (slow): every case on 1-4 ranks in both precisions - each rank runs
# the whole backbone (every rank feeds the whole batch), so that costs many minutes.
set -euo pipefail
. "$(dirname "$0")/check_support.sh"
seed=${PFC_GOLDEN_SEED:?}
v2=${PFC_GOLDEN_V2:?}
[ -f "$seed" ] && [ -f "$v2" ] || { echo "no golden files at $seed, $v2 (tests/golden)"; exit 1; }
seed_case=tiny/seed_arcface_sr0.1_3steps
v2_cases=(tiny/sgd_sr0.1_3steps_dense tiny/adamw_sr0.1_3steps_dense tiny/sgd_sr0_3steps_dense)

passes() {  # passes RANKS PRECISION FILE CASE...: every case passes; prints each summary
  local ranks=$1 precision=$2 file=$3
  shift 3
  local cases=() out
  for c in "$@"; do cases+=(--case "$c"); done
  if ! out=$(mpiexec -n "$ranks" "$PFC" golden "$file" "${cases[@]}" --device cpu \
             --precision "$precision" 2>&1); then
    echo "$out"
    fail "$* on $ranks rank(s), $precision: not every tensor within the rule"
    return
  fi
  echo "$out" | grep -E "ranks?;|compared|^worst|median"
  [ "$(echo "$out" | grep -c "compared, 0 failed")" -eq "$#" ] ||
    fail "$* on $ranks rank(s), $precision: a case's table is missing"
}

fails() {  # fails FILE OPTION VALUE CASE...: under the other version every case fails (exit 3)
  local file=$1 option=$2 value=$3 got=0
  shift 3
  local cases=()
  for c in "$@"; do cases+=(--case "$c"); done
  mpiexec -n 1 "$PFC" golden "$file" "${cases[@]}" --device cpu --precision fp64 \
    "$option" "$value" >"$work/other.log" 2>&1 || got=$?
  grep -E "^tiny/|compared|^worst" "$work/other.log" | sed "s|^|  $option $value: |"
  [ "$got" -eq 3 ] || fail "$* under $option $value: exit code $got, expected 3 (a failed check)"
  [ "$(grep -cE "^pfc.weight .* FAIL" "$work/other.log")" -eq "$#" ] ||
    fail "$* under $option $value: the class centres did not tell the versions apart"
}

if [ "${1:-}" = all ]; then
  for k in 1 2 3 4; do
    for precision in fp64 fp32; do
      passes "$k" "$precision" "$seed" "$seed_case"
      passes "$k" "$precision" "$v2" "${v2_cases[@]}"
    done
  done
else
  for precision in fp64 fp32; do
    passes 1 "$precision" "$seed" "$seed_case"
    passes 1 "$precision" "$v2" "${v2_cases[@]}"
  done
  passes 2 fp32 "$seed" "$seed_case"
  # Four ranks of 250 classes: at sample rate 0 rank 1 holds no positive and samples nothing.
  passes 4 fp64 "$v2" tiny/sgd_sr0_3steps_dense
fi

fails "$seed" --classifier-update dense "$seed_case"
fails "$seed" --margin-gradient straight_through "$seed_case"
fails "$v2" --classifier-update sampled "${v2_cases[@]}"
fails "$v2" --margin-gradient exact tiny/sgd_sr0.1_3steps_dense
[ $failures -eq 0 ]
