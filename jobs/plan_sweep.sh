#!/usr/bin/env bash
# The benchmark's tables planned instead of run (no GPU needed; seconds per cell on a CPU):
# every cell of the seed's tables (the rows of jobs/rows/*.sbatch x DP, MP, PFC 0.1: 33 cells)
# is planned with `pfc plan` as rank 0 of an emulated world of the seed's GPUs, at 8 ranks (the
# seed's node) and at 64, and `pfc report` prints for each world the memory table (planned
# beside the seed's V100 figures, OOM where a cell would not fit) and the speed-bound table,
# and writes them to OUTPUT_DIR/w<W>/report.md (and .csv). Then the largest class count that
# fits ONE GPU (PFC 0.1, MP and DP; r50, batch 128, fp16, embedding 512), found by bisection
# over plans, into OUTPUT_DIR/one_gpu_max.md.
#
#   jobs/plan_sweep.sh OUTPUT_DIR
#
# Variables (see jobs/README.md): PFC_BIN, PFC_PLAN_GPU (v100), PFC_PLAN_WORLDS ("8 64"),
# PFC_PLAN_ROWS (row names; all), PFC_MAX_GPU (h200; empty: no bisection), PFC_MAX_RESOLUTION
# (1000 classes), PFC_SET (more key=value overrides).
set -euo pipefail

jobs_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pfc_home=$(dirname "$jobs_dir")
out=${1:?usage: jobs/plan_sweep.sh OUTPUT_DIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
. "$jobs_dir/sweep_support.sh"
pfc_bin=$(sweep_pfc_bin "$jobs_dir" plan_sweep) || exit 2
config=$pfc_home/input/base.toml
gpu=${PFC_PLAN_GPU:-v100}
read -r -a worlds <<<"${PFC_PLAN_WORLDS:-8 64}"
read -r -a wanted_rows <<<"${PFC_PLAN_ROWS:-}"
read -r -a extra <<<"${PFC_SET:-}"
max_gpu=${PFC_MAX_GPU-h200}
resolution=${PFC_MAX_RESOLUTION:-1000}

mapfile -t rows < <(benchmark_rows "$jobs_dir")
((${#rows[@]} > 0)) || { echo "plan_sweep: no rows in $jobs_dir/rows" >&2; exit 2; }

# plan OUTPUT METHOD IDENTITIES WORLD GPU: one plan; its last lines on stdout.
plan() {
  local output=$1 method=$2 identities=$3 world=$4 on=$5 rate=1.0
  [[ $method == pfc ]] && rate=0.1
  local emulate=(--set emulate_world_size="$world")
  ((world == 1)) && emulate=(--set emulate_world_size=0)
  "$pfc_bin" plan "$config" --gpu "$on" --set method="$method" --set sample_rate="$rate" \
    --set num_classes="$identities" "${emulate[@]}" --set output="\"$output\"" \
    "${extra[@]/#/--set=}"
}

for world in "${worlds[@]}"; do
  echo "plan_sweep: every cell as rank 0 of $world on $gpu, into $out/w$world"
  mkdir -p "$out/w$world"
  for entry in "${rows[@]}"; do
    identities=${entry%% *}
    row=${entry#* }
    if ((${#wanted_rows[@]} > 0)) && [[ " ${wanted_rows[*]} " != *" $row "* ]]; then continue; fi
    for method in dp mp pfc; do
      log=$out/w$world/$row.$method.log
      if ! plan "$out/w$world/$row/$method" "$method" "$identities" "$world" "$gpu" >"$log" 2>&1
      then
        echo "plan_sweep: $row $method failed:" >&2
        tail -n 5 "$log" >&2
        exit 1
      fi
      grep -E "^  (fits|does not fit)" "$log" | sed "s/^ */  $row $method: /"
    done
  done
  "$pfc_bin" report "$out/w$world" --markdown "$out/w$world/report.md" \
    --csv "$out/w$world/report.csv" >/dev/null
  echo "plan_sweep: W = $world tables ($out/w$world/report.md):"
  cat "$out/w$world/report.md"
done

[[ -z $max_gpu ]] && exit 0
# fits METHOD CLASSES: 0 when a plan of that many classes fits one GPU.
fits() {
  plan "$out/one_gpu/probe" "$1" "$2" 1 "$max_gpu" >"$out/one_gpu/probe.log" 2>&1 ||
    { cat "$out/one_gpu/probe.log" >&2; exit 1; }
  grep -q "^  fits" "$out/one_gpu/probe.log"
}
mkdir -p "$out/one_gpu"
{
  echo "## The largest classifier on one $max_gpu (r50, batch 128, fp16, embedding 512)"
  echo
  echo "Bisection over plans (pfc plan, world size 1) to $resolution classes: the most classes"
  echo "whose plan fits the arena pfc reserves by default."
  echo
  echo "| method | classes | plan of that many |"
  echo "|---|---:|---|"
} >"$out/one_gpu_max.md"
for method in pfc mp dp; do
  low=$resolution high=$((resolution * 2))
  while fits "$method" "$high"; do low=$high; high=$((high * 2)); done
  while ((high - low > resolution)); do
    mid=$(((low + high) / 2 / resolution * resolution))
    ((mid <= low)) && mid=$((low + resolution))
    if fits "$method" "$mid"; then low=$mid; else high=$mid; fi
  done
  fits "$method" "$low"
  needs=$(sed -n 's/^  fits: //p' "$out/one_gpu/probe.log")
  label=$method
  [[ $method == pfc ]] && label="pfc 0.1"
  echo "| $label | $low | $needs |" >>"$out/one_gpu_max.md"
  echo "plan_sweep: one $max_gpu holds at most $low classes with $label ($needs)"
done
cat "$out/one_gpu_max.md"
