#!/usr/bin/env bash
# A checkpoint resumes only into the backbone it saved: a custom [1,1,1,1] checkpoint resumed
# with layers = [2,1,1,1], network = "r18" or other widths (and a [2,1,1,1] one resumed with
# [1,1,1,1]) is refused with exit 2, naming the
# first tensor without a counterpart and the config keys that differ, and nothing is written
# (the run's folder is unchanged byte for byte); the same backbone still resumes.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
train() { mpiexec -n 2 "$PFC" train input/smoke.toml "$@"; }

run=$work/run
train --set output=\"$run\" --set steps=10 >"$work/first.log" 2>&1 ||
  { fail "the first run failed"; exit 1; }
before=$(inspect digest "$run")
cp "$run/training.log" "$work/training.log.before"
ckpt=$run/ckpt/step_0000010

expect_exit 2 deeper_layers "checkpoint '$ckpt' does not fit this run's backbone" \
  "the model's parameter 'layer1.1.bn1.weight' [8] is not in the checkpoint" \
  "layers = [1, 1, 1, 1] in the checkpoint, [2, 1, 1, 1] now" -- \
  train --set output=\"$run\" --set resume=true --set layers=[2,1,1,1]
expect_exit 2 r18 "is not in the checkpoint" \
  "network = \"custom\" in the checkpoint, \"r18\" now" -- \
  train --set output=\"$run\" --set resume=true --set network=\"r18\"
# The other way: a deeper checkpoint's extra blocks would be dropped without a word.
train --set output=\"$work/deep\" --set steps=10 --set layers=[2,1,1,1] >"$work/deep.log" 2>&1 ||
  fail "the deeper run failed"
expect_exit 2 shallower "the checkpoint's parameter 'layer1.1.bn1.weight' [8] has no place" \
  "layers = [2, 1, 1, 1] in the checkpoint, [1, 1, 1, 1] now" -- \
  train --set output=\"$work/deep\" --set resume=true
expect_exit 2 wider "the model's parameter 'conv1.weight' is [16, 3, 3, 3], the checkpoint's is" \
  "widths = [8, 16, 16, 32] in the checkpoint, [16, 16, 16, 32] now" -- \
  train --set output=\"$run\" --set resume=true --set widths=[16,16,16,32]
expect_exit 2 deeper_elsewhere "does not fit this run's backbone" -- \
  train --set output=\"$work/other\" --set resume_from=\"$ckpt\" --set layers=[1,2,1,1]
[ "$(inspect digest "$run")" = "$before" ] || fail "a refused resume changed $run"
kept_log "$work/training.log.before" "$run"

expect_exit 0 same_backbone "resumed from $ckpt at step 10" -- \
  train --set output=\"$run\" --set resume=true
[ "$failures" -eq 0 ]
