#!/usr/bin/env bash
# Damaged checkpoints and diverged runs, end to end on 2 ranks. A newest checkpoint with a NaN
# in conv1.weight or in a running variance, a flipped byte in a shard (its checksum), 3.4e38 in
# a class centre, or a missing shard is passed over with a warning naming what is wrong, and the
# run continues from the checkpoint before it; a missing or dangling `latest` gives way to the
# newest complete checkpoint; a checkpoint without checksums (older versions) loads with a
# warning. Each of these continues bit-identically to a run that was never interrupted (losses
# and final checkpoint). With no readable checkpoint left the resume fails (exit 1) and changes
# nothing. lr = 1e12 stops the run as diverged (exit 1, status "diverged") and keeps the last
# good checkpoint byte for byte.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
train() {
  mpiexec -n 2 "$PFC" train input/smoke.toml --set frequent=1 --set checkpoint_every=5 \
    --set keep_checkpoints=3 --set steps=10 "$@"
}

train --set output=\"$work/straight\" --set steps=15 >"$work/straight.log" 2>&1 ||
  { fail "the uninterrupted run failed"; exit 1; }
train --set output=\"$work/base\" >"$work/base.log" 2>&1 || { fail "the base run failed"; exit 1; }

# resumes_like_straight CASE FROM PATTERN: the copy CASE (already damaged) resumes, says
# PATTERN, continues from step FROM and ends as the uninterrupted run did.
resumes_like_straight() {
  local name=$1 from=$2 pattern=$3 out=$work/$1
  expect_exit 0 "$name" "$pattern" "resumed from $out/ckpt/$(printf step_%07d "$from") at step" \
    -- train --set output=\"$out\" --set resume=true --set steps=15
  inspect same-losses "$work/straight" "$out" 1 15 || fail "$name: the losses differ"
  for step in step_0000010 step_0000015; do
    inspect same-checkpoint "$work/straight/ckpt/$step" "$out/ckpt/$step" ||
      fail "$name: $step differs from the uninterrupted run's"
  done
  [ "$(cat "$out/ckpt/latest")" = step_0000015 ] || fail "$name: latest is not step 15"
}
copy_of_base() { cp -r "$work/base" "$work/$1"; }

for how in nan-conv1 nan-running-var huge-centre flip-shard; do
  copy_of_base "$how"
  inspect damage "$work/$how/ckpt/step_0000010" "$how"
done
resumes_like_straight nan-conv1 5 "backbone parameter 'conv1.weight' element 0 is NaN"
resumes_like_straight nan-running-var 5 "backbone buffer 'bn1.running_var' element 0 is NaN"
resumes_like_straight huge-centre 5 "the class centre of class 3 (element 4) is 3.4e+38"
resumes_like_straight flip-shard 5 "data error detected by Fletcher32 checksum"
copy_of_base missing-shard
rm "$work/missing-shard/ckpt/step_0000010/shard_00001.h5"
resumes_like_straight missing-shard 5 "shard_00001.h5' is missing"
copy_of_base latest-missing
rm "$work/latest-missing/ckpt/latest"
resumes_like_straight latest-missing 10 "latest' is missing; continuing from the newest complete"
copy_of_base latest-dangling
echo step_0000040 >"$work/latest-dangling/ckpt/latest"
resumes_like_straight latest-dangling 10 "names checkpoint 'step_0000040', but"
copy_of_base no-checksums
inspect damage "$work/no-checksums/ckpt/step_0000010" strip-checksums
resumes_like_straight no-checksums 10 "has no checksums (written by a version of pfc before them)"

# The only checkpoint is damaged: nothing to continue from, and nothing changes.
train --set output=\"$work/single\" --set steps=5 >"$work/single-first.log" 2>&1 ||
  fail "the 5-step run failed"
inspect damage "$work/single/ckpt/step_0000005" nan-conv1
before=$(inspect digest "$work/single")
cp "$work/single/training.log" "$work/single.log.before"
expect_exit 1 only_checkpoint_damaged "no checkpoint to continue from can be read" \
  "backbone parameter 'conv1.weight' element 0 is NaN" -- \
  train --set output=\"$work/single\" --set resume=true
[ "$(inspect digest "$work/single")" = "$before" ] || fail "the failed resume changed the run"
kept_log "$work/single.log.before" "$work/single"

# Divergence: lr = 1e12 from the good step-5 checkpoint.
train --set output=\"$work/diverge\" --set steps=5 >"$work/diverge-first.log" 2>&1 ||
  fail "the 5-step run failed"
good=$(inspect digest "$work/diverge/ckpt")
expect_exit 1 diverged "training diverged: the loss has been NaN for 3 consecutive steps" \
  "the last good checkpoint stays" -- \
  train --set output=\"$work/diverge\" --set resume=true --set lr=1e12 --set steps=15
[ "$(inspect status "$work/diverge" | head -1)" = diverged ] || fail "status is not diverged"
[ "$(inspect digest "$work/diverge/ckpt")" = "$good" ] || fail "the good checkpoint changed"
# From the first step, checkpointing every step: whatever is the last checkpoint, it is one
# that can be trained on.
expect_exit 1 diverged_fresh "training diverged" -- \
  train --set output=\"$work/diverge-fresh\" --set lr=1e12 --set checkpoint_every=1
[ "$(inspect status "$work/diverge-fresh" | head -1)" = diverged ] ||
  fail "status is not diverged: $(inspect status "$work/diverge-fresh")"
if [ -f "$work/diverge-fresh/ckpt/latest" ]; then
  inspect usable "$work/diverge-fresh/ckpt/$(cat "$work/diverge-fresh/ckpt/latest")" ||
    fail "the diverged run's last checkpoint holds unusable values"
fi
[ "$failures" -eq 0 ]
