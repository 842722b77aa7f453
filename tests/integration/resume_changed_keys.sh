#!/usr/bin/env bash
# A run that continues its checkpoint under another config says so: one notice names every key
# that decides what the run computes and changed since the checkpoint (gradient_acc,
# sample_rate, interclass_filtering_threshold, method: the classifier is saved as one
# [classes, embedding] matrix whatever the method, so the state carries over), with both values,
# and none of those that only say how the run is carried out (steps, frequent); fp16 changes
# both ways, as the checkpoint's masters are f32 either way. A change the state cannot follow
# (another embedding size) is refused, exit 2, naming the key, the run's folder untouched.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
train() { mpiexec -n 2 "$PFC" train input/smoke.toml "$@"; }

run=$work/run
train --set output=\""$run"\" --set steps=4 --set checkpoint_every=2 >"$work/first.log" 2>&1 ||
  { fail "the first run failed"; cat "$work/first.log"; exit 1; }

changes=(--set gradient_acc=2 --set sample_rate=1.0 --set interclass_filtering_threshold=0.2
         --set method=\"mp\")
notice="differs from the one checkpoint '$run/ckpt/step_0000004' was saved with in 4 keys: "
notice+="sample_rate = 1.0 (was 0.5), gradient_acc = 2 (was 1), "
notice+="interclass_filtering_threshold = 0.2 (was 0.0), method = \"mp\" (was \"pfc\"); "
notice+="its state carries over to the new values"
expect_exit 0 changed "$notice" -- train --set output=\""$run"\" --set resume=true --set steps=6 \
  --set frequent=1 "${changes[@]}"
[ "$(grep -c "differs from the one checkpoint" "$work/changed.log")" = 1 ] ||
  fail "not one notice of the changed keys"
grep -qE "steps|frequent" <<<"$(grep "differs from the one checkpoint" "$work/changed.log")" &&
  fail "the notice names keys that only say how the run is carried out"

# The whole classifier on every rank (dp) from a checkpoint of a split one.
expect_exit 0 to_dp "method = \"dp\" (was \"mp\")" \
  "resumed from $run/ckpt/step_0000006 at step 6" -- train --set output=\""$run"\" \
  --set resume=true --set steps=8 "${changes[@]:0:6}" --set method=\"dp\"
# Unchanged: no notice.
expect_exit 0 same "resumed from $run/ckpt/step_0000008 at step 8" -- \
  train --set output=\""$run"\" --set resume=true --set steps=9 "${changes[@]:0:6}" \
  --set method=\"dp\"
grep -q "differs from the one checkpoint" "$work/same.log" && fail "a notice with no key changed"
# Another precision, both ways: the checkpoint holds f32 masters whatever fp16 was (on the CPU,
# fp16 = true multiplies the backbone's convolutions in bf16).
expect_exit 0 to_fp16 "fp16 = true (was false)" \
  "resumed from $run/ckpt/step_0000009 at step 9" -- train --set output=\""$run"\" \
  --set resume=true --set steps=10 "${changes[@]:0:6}" --set method=\"dp\" --set fp16=true
expect_exit 0 from_fp16 "fp16 = false (was true)" \
  "resumed from $run/ckpt/step_0000010 at step 10" -- train --set output=\""$run"\" \
  --set resume=true --set steps=11 "${changes[@]:0:6}" --set method=\"dp\" --set fp16=false

before=$(inspect digest "$run")
expect_exit 2 embedding \
  "was saved with embedding_size = 32, but the config has embedding_size = 16" -- \
  train --set output=\""$run"\" --set resume=true --set steps=12 --set embedding_size=16
[ "$(inspect digest "$run")" = "$before" ] || fail "the refused resume changed $run"
[ "$failures" -eq 0 ]
