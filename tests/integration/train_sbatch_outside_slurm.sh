#!/usr/bin/env bash
# jobs/train.sbatch run with bash outside a Slurm job says "not inside a Slurm job" and how to
# run it there (PFC_LAUNCHER), exit 2, before starting anything; with PFC_LAUNCHER it trains
# and reports the run done.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/check_support.sh"
src=${PFC_SOURCE_DIR:?}
[ -n "${PFC:-}" ] && [ -x "$PFC" ] || { echo "skipped: \$PFC is not built"; exit 77; }
cd "$work"  # where the script keeps its outcome file while the run lasts
outside() { env -u SLURM_JOB_ID -u SLURM_SUBMIT_DIR -u PFC_LAUNCHER PFC_BIN="$PFC" "$@"; }

expect_exit 2 no_slurm "train.sbatch: not inside a Slurm job" "PFC_LAUNCHER" -- \
  outside bash "$src/jobs/train.sbatch" "$src/input/smoke.toml" --set output=\""$work/run"\"
[ ! -e "$work/run" ] || fail "the refused script started a run"
grep -qE "^srun:" "$work/no_slurm.log" && fail "srun ran outside Slurm"

expect_exit 0 launcher "train.sbatch: the run is done (2 steps)" -- \
  outside PFC_LAUNCHER="mpiexec -n 1" OMP_NUM_THREADS=1 bash "$src/jobs/train.sbatch" \
  "$src/input/smoke.toml" --set steps=2 --set checkpoint_every=-1 --set output=\""$work/run"\"
[ "$failures" -eq 0 ]
