#!/usr/bin/env bash
# AdamW with gradient_acc = 2 (Partial FC at sample rate 0.5, so each micro-batch samples its
# own rows) resumes exactly: 8 steps straight on 2 ranks and 4 steps + a resume for 4 print the
# same losses and end in the same checkpoint, tensor for tensor; the step-8 checkpoint re-split
# for 3 ranks and back for 2 holds exactly the state saved (every backbone tensor and both of
# its AdamW moments, the global class centres and both of theirs, the update counts, every
# state attribute); and 3 ranks train on from the re-split one.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
out=$work
adamw=(--set 'optimizer="adamw"' --set lr=0.001 --set weight_decay=0.1 --set 'lr_scaling="none"'
       --set gradient_acc=2 --set frequent=1 --set checkpoint_every=4 --set steps=8)
train() {  # train RANKS OUTPUT ARGS...: a run of input/smoke.toml with the settings above
  local ranks=$1 output=$2
  shift 2
  mpiexec -n "$ranks" "$PFC" train input/smoke.toml "${adamw[@]}" --set output=\"$output\" "$@" \
    > "$output.log" 2>&1 || { cat "$output.log"; exit 1; }
}
losses() { grep -o "Loss [0-9.]*" "$1" | awk '{print $2}'; }

# same_state REFERENCE FOLDER...: same_checkpoint.py's comparison, on a reference that holds
# AdamW's moments of the backbone and the class centres and counts every step as an update.
same_state() {
  "$python" - "$1" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1] + "/model.h5", "r")
state = f["state"].attrs
assert state["optimizer"] == "adamw", state["optimizer"]
for name in ("pfc/exp_avg", "pfc/exp_avg_sq", "backbone/exp_avg/conv1.weight",
             "backbone/exp_avg_sq/fc.weight"):
    assert name in f, f"{sys.argv[1]} lacks {name}"
assert state["backbone_updates"] == state["step"] == state["classifier_updates"], dict(state)
PY
  "$python" tests/integration/same_checkpoint.py "$@"
}

train 2 "$out/straight"
train 2 "$out/split" --set steps=4
train 2 "$out/split" --set resume=true
grep -q "resumed from $out/split/ckpt/step_0000004 at step 4" "$out/split.log"
diff <(losses "$out/straight.log" | tail -n 4) <(losses "$out/split.log")
echo -n "8 straight == 4 + resume 4 (losses and checkpoint): "
same_state "$out/straight/ckpt/step_0000008" "$out/split/ckpt/step_0000008"

train 3 "$out/resplit-3" --set resume_from=\"$out/split/ckpt/step_0000008\"
train 2 "$out/resplit-2" --set resume_from=\"$out/resplit-3\"
echo -n "2 -> 3 -> 2 ranks: "
same_state "$out/split/ckpt/step_0000008" "$out/resplit-3/ckpt/step_0000008" \
  "$out/resplit-2/ckpt/step_0000008"

train 3 "$out/resplit-3" --set resume=true --set steps=10
grep -q "Global Step: 10" "$out/resplit-3.log"
[ "$(cat "$out/resplit-3/ckpt/latest")" = step_0000010 ]
echo "3 ranks trained on to step 10"
