#!/usr/bin/env bash
# A small Vision Transformer (network = "vit": embed 32, 2 blocks of 4 heads, 36x36 images of
# 16 tokens, masking and DropPath on, activation checkpointing) trains, checkpoints and resumes
# like iresnet: 4 steps straight equal 2 steps + resume for 2 on the same 2 ranks (losses to
# 1e-6, the step-4 checkpoints bit for bit: the resumed run draws the masks and DropPath
# decisions the uninterrupted one drew, keyed by seed, step and global sample); the checkpoint
# resumes on 3 ranks and trains on; and pfc export writes its ONNX model (onnxruntime's
# embeddings of a ViT's export against PyTorch's: import_torch.sh).
set -euo pipefail
. "$(dirname "$0")/run_support.sh"
out=$work

vit=(--set network=\"vit\" --set embed_dim=32 --set depth=2 --set num_heads=4
     --set image_size=36 --set mask_ratio=0.1 --set drop_path_rate=0.2
     --set using_checkpoint=true --set optimizer=\"adamw\" --set lr=0.001
     --set weight_decay=0.1 --set batch_size=2 --set frequent=1 --set checkpoint_every=2
     --set method=pfc --set sample_rate=0.5)
train() {  # train RANKS OUTPUT ARGS...
  local ranks=$1 output=$2
  shift 2
  mpiexec -n "$ranks" "$PFC" train input/smoke.toml "${vit[@]}" --set output=\"$output\" "$@" \
    > "$output.log" 2>&1 || { cat "$output.log"; exit 1; }
}

train 2 "$out/straight" --set steps=4
grep -q "network vit (Vision Transformer: embed 32, depth 2, 4 heads" "$out/straight.log" ||
  { echo "the log does not name the network:"; cat "$out/straight.log"; exit 1; }
train 2 "$out/split" --set steps=2
train 2 "$out/split" --set steps=4 --set resume=true
grep -q "resumed from $out/split/ckpt/step_0000002 at step 2" "$out/split.log"
echo -n "vit: 4 straight == 2 + resume 2; "
"$python" tests/integration/same_losses.py "$out/straight/metrics.h5" "$out/split/metrics.h5" 3 4
echo -n "vit: 4 straight == 2 + resume 2: "
"$python" tests/integration/same_checkpoint.py "$out/straight/ckpt/step_0000004" \
  "$out/split/ckpt/step_0000004"

train 3 "$out/split" --set steps=5 --set resume=true
grep -q "resumed from $out/split/ckpt/step_0000004 at step 4" "$out/split.log"
grep -q "Global Step: 5 " "$out/split.log"
echo "vit: the 2-rank checkpoint resumed on 3 ranks and trained to step 5"

"$PFC" export "$out/split" "$out/vit.onnx" > "$out/export.log" 2>&1 ||
  { echo "pfc export of a ViT: exit $?"; cat "$out/export.log"; exit 1; }
[ -s "$out/vit.onnx" ]
echo "vit: pfc export writes its ONNX model"
