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
python=/usr/bin/python3
if ! "$python" -c 'import h5py' 2>/dev/null; then
  echo "skipped: $python cannot import h5py"
  exit 77
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "${PFC_SOURCE_DIR:?}"
. "$here/check_support.sh"
inspect() { "$python" "$here/inspect_run.py" "$@"; }
train() {
  mpiexec -n 2 "$PFC" train input/smoke.toml --set frequent=1 --set checkpoint_every=10 \
    --set keep_checkpoints=3 "$@"
}

train --set output=\"$work/straight\" --set steps=30 >"$work/straight.log" 2>&1 ||
  { fail "the uninterrupted run failed"; exit 1; }
train --set output=\"$work/base\" >"$work/base.log" 2>&1 || { fail "the base run failed"; exit 1; }

# resumes_like_straight CASE FROM PATTERN: the copy CASE (already damaged) resumes, says
# PATTERN, continues from step FROM and ends as the uninterrupted run did.
resumes_like_straight() {
  local name=$1 from=$2 pattern=$3 out=$work/$1
  expect_exit 0 "$name" "$pattern" "resumed from $out/ckpt/step_00000$from at step $from" -- \
    train --set output=\"$out\" --set resume=true --set steps=30
  inspect same-losses "$work/straight" "$out" 1 30 || fail "$name: the losses differ"
  for step in 20 30; do
    inspect same-checkpoint "$work/straight/ckpt/step_00000$step" "$out/ckpt/step_00000$step" ||
      fail "$name: checkpoint $step differs from the uninterrupted run's"
  done
  [ "$(cat "$out/ckpt/latest")" = step_0000030 ] || fail "$name: latest is not step 30"
}
copy_of_base() { cp -r "$work/base" "$work/$1"; }

for how in nan-conv1 nan-running-var huge-centre flip-shard; do
  copy_of_base "$how"
  inspect damage "$work/$how/ckpt/step_0000020" "$how"
done
resumes_like_straight nan-conv1 10 "backbone parameter 'conv1.weight' element 0 is NaN"
resumes_like_straight nan-running-var 10 "backbone buffer 'bn1.running_var' element 0 is NaN"
resumes_like_straight huge-centre 10 "the class centre of class 3 (element 4) is 3.4e+38"
resumes_like_straight flip-shard 10 "data error detected by Fletcher32 checksum"
copy_of_base missing-shard
rm "$work/missing-shard/ckpt/step_0000020/shard_00001.h5"
resumes_like_straight missing-shard 10 "shard_00001.h5' is missing"
copy_of_base latest-missing
rm "$work/latest-missing/ckpt/latest"
resumes_like_straight latest-missing 20 "latest' is missing; continuing from the newest complete"
copy_of_base latest-dangling
echo step_0000040 >"$work/latest-dangling/ckpt/latest"
resumes_like_straight latest-dangling 20 "names checkpoint 'step_0000040', but"
copy_of_base no-checksums
inspect damage "$work/no-checksums/ckpt/step_0000020" strip-checksums
resumes_like_straight no-checksums 20 "has no checksums (written by a version of pfc before them)"

# The only checkpoint is damaged: nothing to continue from, and nothing changes.
train --set output=\"$work/single\" --set steps=10 >"$work/single-first.log" 2>&1 ||
  fail "the 10-step run failed"
inspect damage "$work/single/ckpt/step_0000010" nan-conv1
before=$(inspect digest "$work/single")
expect_exit 1 only_checkpoint_damaged "no checkpoint to continue from can be read" \
  "backbone parameter 'conv1.weight' element 0 is NaN" -- \
  train --set output=\"$work/single\" --set resume=true
[ "$(inspect digest "$work/single")" = "$before" ] || fail "the failed resume changed the run"

# Divergence: lr = 1e12 from the good step-10 checkpoint.
train --set output=\"$work/diverge\" --set steps=10 >"$work/diverge-first.log" 2>&1 ||
  fail "the 10-step run failed"
good=$(inspect digest "$work/diverge/ckpt")
expect_exit 1 diverged "training diverged: the loss has been NaN for 3 consecutive steps" \
  "the last good checkpoint stays" -- \
  train --set output=\"$work/diverge\" --set resume=true --set lr=1e12 --set steps=30
[ "$(inspect status "$work/diverge" | head -1)" = diverged ] || fail "status is not diverged"
[ "$(inspect digest "$work/diverge/ckpt")" = "$good" ] || fail "the good checkpoint changed"
# From the first step, checkpointing every step: whatever is the last checkpoint, it is one
# that can be trained on.
expect_exit 1 diverged_fresh "training diverged" -- \
  train --set output=\"$work/diverge-fresh\" --set lr=1e12 --set checkpoint_every=1
[ "$(inspect status "$work/diverge-fresh" | head -1)" = diverged ] ||
  fail "status is not diverged: $(inspect status "$work/diverge-fresh")"
if [ -f "$work/diverge-fresh/ckpt/latest" ]; then
  expect_exit 0 diverged_fresh_resumable "resumed from" -- train \
    --set output=\"$work/diverge-fresh\" --set resume=true --set steps=0 --set num_epoch=1 \
    --set checkpoint_every=-1 --set lr=1e-9 --set steps=$(($(sed 's/step_0*//' \
    "$work/diverge-fresh/ckpt/latest") + 1))
fi
[ "$failures" -eq 0 ]
