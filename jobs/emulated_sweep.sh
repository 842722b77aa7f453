#!/usr/bin/env bash
# The benchmark's two tables measured on ONE GPU: every cell of the seed's speed and memory
# tables (the rows of jobs/rows/*.sbatch, each with the methods bench_row.sh runs for it) is
# trained as rank 0 of an emulated 8-GPU node (emulate_world_size = 8), so that each cell's
# per-GPU memory and compute speed are those of one GPU of the real job; the time the
# collectives would take is modelled and reported beside them (metrics.h5 comm_time_s).
# Then `pfc report` prints both tables.
#
#   jobs/emulated_sweep.sh OUTPUT_DIR
#
# The cells run through bench_row.sh (PFC_LAUNCHER: this script with --launch, which keeps
# each cell to its time budget), so a cell that does not fit is recorded as out_of_memory and
# the sweep goes on, and a cell already done in OUTPUT_DIR is not run again. Variables (and
# bench_row.sh's, e.g. PFC_SMOKE=1 for a CPU run of the tiny network): see jobs/README.md.
set -uo pipefail

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
jobs_dir=$(dirname "$self")

# ---- --launch CMD...: one cell, stopped by SIGUSR1 (the trainer ends at the next step and
# writes its summary) when its budget is spent; 125 without running when no time is left.
if [[ ${1:-} == --launch ]]; then
  shift
  left=$((PFC_SWEEP_DEADLINE - $(date +%s)))
  limit=$((left < PFC_SWEEP_CELL_S ? left : PFC_SWEEP_CELL_S))
  if ((limit < 5)); then
    echo "emulated_sweep: the sweep's time budget is spent; cell not run"
    exit 125
  fi
  echo "emulated_sweep: cell budget ${limit}s"
  exec timeout --preserve-status --signal=USR1 --kill-after=10 "$limit" "$@"
fi

out=${1:?usage: jobs/emulated_sweep.sh OUTPUT_DIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
world=${PFC_SWEEP_WORLD:-8}
rank=${PFC_SWEEP_RANK:-0}
budget=${PFC_SWEEP_BUDGET_S:-480}
# Every method in every row, 33 cells — also those the seed could not run (its "–"), which is
# where the memory per GPU says most. 480 s over 33 cells; the report is left 10 s at the end.
export PFC_METHODS=${PFC_METHODS:-dp mp pfc}
export PFC_SWEEP_CELL_S=${PFC_SWEEP_CELL_S:-14}
export PFC_SWEEP_DEADLINE=$(($(date +%s) + budget - 10))

. "$jobs_dir/sweep_support.sh"
pfc_bin=$(sweep_pfc_bin "$jobs_dir" emulated_sweep) || exit 2

# Rows as the row scripts name them ("125000 row_0125k"), fewest identities first.
mapfile -t rows < <(benchmark_rows "$jobs_dir")
((${#rows[@]} > 0)) || { echo "emulated_sweep: no rows in $jobs_dir/rows" >&2; exit 2; }

# PFC_SWEEP_CELLS: "ROW" (the row's PFC_METHODS) or "ROW/METHOD" items; empty: every cell.
read -r -a wanted <<<"${PFC_SWEEP_CELLS:-}"
for item in "${wanted[@]}"; do
  known=0
  for entry in "${rows[@]}"; do [[ ${item%%/*} == "${entry#* }" ]] && known=1; done
  if ((!known)); then
    echo "emulated_sweep: PFC_SWEEP_CELLS names '$item'; rows are: ${rows[*]#* }" >&2
    exit 2
  fi
done

export PFC_BIN=$pfc_bin PFC_BENCH_OUTPUT=$out PFC_LAUNCHER="$self --launch"
export PFC_SET="emulate_world_size=$world emulate_rank=$rank ${PFC_SET:-}"
if [[ ${PFC_SMOKE:-0} != 1 ]]; then
  # 36 steps logged every 2: metrics.h5 leaves the first 20 % of rows (6 steps) out as
  # warm-up, so each cell's speed is the median over 30 timed steps.
  export PFC_STEPS=${PFC_STEPS:-36} PFC_FREQUENT=${PFC_FREQUENT:-2}
fi

echo "emulated_sweep: rank $rank of $world emulated per cell, into $out; budget ${budget}s" \
  "for the sweep, at most ${PFC_SWEEP_CELL_S}s per cell"
for entry in "${rows[@]}"; do
  identities=${entry%% *}
  row=${entry#* }
  methods=()
  selected=$((${#wanted[@]} == 0))
  for item in "${wanted[@]}"; do
    if [[ $item == "$row" ]]; then
      selected=1
    elif [[ ${item%%/*} == "$row" ]]; then
      methods+=("${item#*/}")
    fi
  done
  # A whole row wins over some of its methods.
  ((selected)) && methods=()
  ((selected || ${#methods[@]} > 0)) || continue
  # A cell the budget left out, or stopped before a timed step, is not marked done
  # (bench_row.sh), so running the sweep again measures it.
  "$jobs_dir/bench_row.sh" "$row" "$identities" "${methods[@]}"
done

echo "emulated_sweep: finished in ${SECONDS}s; the tables:"
"$pfc_bin" report "$out"
