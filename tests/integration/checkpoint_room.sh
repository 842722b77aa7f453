#!/usr/bin/env bash
# A checkpoint that has no room is refused before anything is staged or written: with
# PFC_FAULT at:no_room, rank 1 finds neither free disk space nor free host memory for the
# checkpoint of step 4. Both ranks stop with exit 1; rank 1's message gives the figures (what
# the checkpoint needs of disk and of host memory, and what is free), rank 0's points to it;
# `latest` stays on step 2, no folder or staging folder of step 4 appears, and the run resumes
# from step 2 and finishes once there is room. `pfc plan` prints what a checkpoint costs.
set -uo pipefail
src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/check_support.sh"
cd "$src"
train() {
  mpiexec -n 2 "$PFC" train input/smoke.toml --set frequent=1 --set checkpoint_every=2 \
    --set steps=6 --set output=\"$run\" "$@"
}
run=$work/run

export PFC_FAULT="rank:1,step:4,at:no_room"
expect_exit 1 no_room \
  "checkpoint $run/ckpt/step_0000004 is not written (\`latest\` stays on step_0000002): it needs" \
  "MiB of disk for its files, 0.00 MiB free in '$run/ckpt (PFC_FAULT at:no_room)'" \
  "MiB of host memory to stage rank 1's part, 0.00 MiB available (PFC_FAULT at:no_room)" \
  "another rank has no room for it (see its message)" -- train
unset PFC_FAULT
[ "$(cat "$run/ckpt/latest" 2>/dev/null)" = step_0000002 ] ||
  fail "latest is '$(cat "$run/ckpt/latest" 2>/dev/null)', not step_0000002"
leftovers=$(find "$run/ckpt" -name 'step_0000004*')
[ -z "$leftovers" ] || fail "the refused checkpoint left: $leftovers"

expect_exit 0 resume "resumed from $run/ckpt/step_0000002" -- train --set resume=true
[ "$(cat "$run/ckpt/latest" 2>/dev/null)" = step_0000006 ] ||
  fail "the resumed run ends on '$(cat "$run/ckpt/latest" 2>/dev/null)', not step_0000006"

expect_exit 0 plan "a checkpoint: " "GiB on disk (the backbone and every rank's class centres)" \
  "GiB of host memory staged by the rank that writes the most" -- \
  "$PFC" plan input/smoke.toml --set output=\"$work/plan\"
[ "$failures" -eq 0 ]
