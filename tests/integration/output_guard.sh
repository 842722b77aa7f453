#!/usr/bin/env bash
# A new run never destroys another one: `pfc train` into an output folder that holds a run
# (its metrics.h5 and checkpoints) is refused at start-up with exit 2 and a message saying
# how to continue it (resume) or start over elsewhere, and not one byte of the folder
# changes. That is so for a shorter run (whose checkpoints would once have deleted the later
# ones) and for the same run again (which once trained to the end and then failed). A resume,
# and a new run from the checkpoint into another output, still work.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
train() { mpiexec -n 2 "$PFC" train input/smoke.toml "$@"; }

run=$work/run
train --set output=\"$run\" >"$work/first.log" 2>&1 || { fail "the first run failed"; exit 1; }
before=$(inspect digest "$run")
log_before=$(sha256sum <"$run/training.log")

expect_exit 2 shorter_run "already holds a run (metrics.h5, 2 checkpoints)" "set resume = true" \
  "set resume_from = \"$run\" and another output" -- train --set output=\"$run\" --set steps=3
[ "$(inspect digest "$run")" = "$before" ] || fail "the refused shorter run changed $run"

expect_exit 2 same_run_again "already holds a run" -- train --set output=\"$run\" \
  --set checkpoint_every=20
[ "$(inspect digest "$run")" = "$before" ] || fail "the refused second run changed $run"
[ "$(sha256sum <"$run/training.log")" = "$log_before" ] ||
  fail "a refused new run wrote to the other run's training.log"

# A run killed during its first checkpoint left metrics.h5 and a staging folder only.
mkdir -p "$work/partial/ckpt/step_0000010.tmp"
cp "$run/metrics.h5" "$work/partial/"
expect_exit 2 partial_run "already holds a run (metrics.h5, 1 unfinished checkpoint folder(s))" \
  -- train --set output=\"$work/partial\"

# A new run from the checkpoint, elsewhere: allowed, and the source stays as it was.
expect_exit 0 resume_from_elsewhere "resumed from $run/ckpt/step_0000020 at step 20" -- \
  train --set output=\"$work/other\" --set resume_from=\"$run\" --set steps=22
[ "$(inspect digest "$run")" = "$before" ] || fail "resume_from changed its source $run"

# Continuing the run itself is what the folder is for.
expect_exit 0 resume "resumed from $run/ckpt/step_0000020 at step 20" -- \
  train --set output=\"$run\" --set resume=true --set steps=25
[ "$(cat "$run/ckpt/latest")" = step_0000025 ] || fail "the resume did not checkpoint step 25"
[ "$failures" -eq 0 ]
