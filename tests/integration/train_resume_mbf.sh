#!/usr/bin/env bash
# MobileFaceNet (network = "mbf") trains, checkpoints and resumes like iresnet: 4 steps
# straight equal 2 steps + resume for 2 on the same 2 ranks (losses to 1e-6, and the step-4
# checkpoints bit for bit; at this size ArcFace's loss often sits at its 1e-30 clamp, 69.08,
# so the state is the sharper test); the 2-rank checkpoint of step 4 re-split for 3 ranks and
# back for 2 holds exactly the state saved (every backbone tensor, momentum, batch-norm
# statistic, the class centres and every state attribute, bit for bit); it resumes on 3 ranks
# and trains on; and pfc export writes it.
set -euo pipefail
. "$(dirname "$0")/run_support.sh"
out=$work

# input/smoke.toml with arcface_torch's get_mbf at its 112x112 images, two images per rank.
mbf=(--set network=mbf --set image_size=112 --set batch_size=2 --set frequent=1
     --set checkpoint_every=2 --set method=pfc --set sample_rate=0.5)
train() {  # train RANKS OUTPUT ARGS...
  local ranks=$1 output=$2
  shift 2
  mpiexec -n "$ranks" "$PFC" train input/smoke.toml "${mbf[@]}" --set output=\"$output\" "$@" \
    > "$output.log" 2>&1 || { cat "$output.log"; exit 1; }
}

train 2 "$out/straight" --set steps=4
grep -q "network mbf (MobileFaceNet \[1, 4, 6, 2\], scale 2" "$out/straight.log" ||
  { echo "the log does not name the network:"; cat "$out/straight.log"; exit 1; }
train 2 "$out/split" --set steps=2
train 2 "$out/split" --set steps=4 --set resume=true
grep -q "resumed from $out/split/ckpt/step_0000002 at step 2" "$out/split.log"
echo -n "mbf: 4 straight == 2 + resume 2; "
"$python" tests/integration/same_losses.py "$out/straight/metrics.h5" "$out/split/metrics.h5" 3 4
echo -n "mbf: 4 straight == 2 + resume 2: "
"$python" tests/integration/same_checkpoint.py "$out/straight/ckpt/step_0000004" \
  "$out/split/ckpt/step_0000004"

# resume_from with steps equal to the checkpoint's step trains nothing and writes the state
# back in the new run's split.
train 3 "$out/resplit-3" --set steps=4 --set resume_from=\"$out/split/ckpt/step_0000004\"
train 2 "$out/resplit-2" --set steps=4 --set resume_from=\"$out/resplit-3\"
echo -n "mbf 2 -> 3 -> 2 ranks: "
"$python" tests/integration/same_checkpoint.py "$out/split/ckpt/step_0000004" \
  "$out/resplit-3/ckpt/step_0000004" "$out/resplit-2/ckpt/step_0000004" --world-sizes 3,2

train 3 "$out/split" --set steps=5 --set resume=true
grep -q "resumed from $out/split/ckpt/step_0000004 at step 4" "$out/split.log"
grep -q "Global Step: 5 " "$out/split.log"
[ "$(cat "$out/split/ckpt/latest")" = step_0000005 ]
echo "mbf: the 2-rank checkpoint resumed on 3 ranks and trained to step 5"

# The trained network leaves as ONNX (its onnxruntime check against arcface_torch is
# tests/onnx/onnx_golden_test.cpp).
"$PFC" export "$out/split" "$out/mbf.onnx" > "$out/export.log" 2>&1 ||
  { cat "$out/export.log"; exit 1; }
grep -q "exported MobileFaceNet \[1, 4, 6, 2\], scale 2, embedding 32" "$out/export.log"
[ -s "$out/mbf.onnx" ]
