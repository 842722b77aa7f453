#!/usr/bin/env bash
# arcface_torch's models as starting points, against files PyTorch itself writes here (a venv
# under the build folder: tests/support/python_venv.sh torch torch onnxruntime numpy; skipped
# when PyPI cannot be reached):
#  - `pfc import` of a tiny iresnet's, MobileFaceNet's and a small Vision Transformer's
#    model.pt (torch.save of the state_dict) and ONNX export (torch2onnx.py's call: batch norms
#    folded into the convolutions; the ViT's with a dynamic batch, at opset 11: LayerNorm
#    decomposed, shapes computed from the input's), of float16 weights (HalfStorage) and of
#    non-contiguous views; then `pfc embed` of the imported run equals torch's inference-mode
#    embeddings of the same decoded images within the fp32 rule (max(1e-4, 4 x torch's own
#    fp32 error) of the float64 answer), as do onnxruntime's of `pfc export`'s model of the run
#    (MobileFaceNet, the ViT), and `pfc verify` takes it;
#  - fine-tuning: `pfc train` with pretrained = model.pt on another class count logs where its
#    backbone came from and trains; `resume = true` on the imported run repeats its losses
#    exactly (the import is the trainer's own start); pretrained = a pfc run works too;
#  - refusals, exit 2, naming the file (and the tensor): another network's .pt and .onnx,
#    DoubleStorage, PyTorch's legacy format, a data.pkl that names os.system, a storage cut
#    short, an archive cut in half, a zip of something else, an import into a run, and
#    pretrained with another network (nothing written).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/face_data_support.sh"
. "$here/check_support.sh"
models="$here/import"
bin_images="${PFC_BINARY_DIR:-.}/bin/pfc_bin_images"

torch_python=$(bash "$PFC_SOURCE_DIR/tests/support/python_venv.sh" torch torch onnxruntime numpy)
venv=$?
[ $venv -eq 77 ] && { echo "skipped: PyTorch cannot be installed (PyPI unreachable)"; exit 77; }
[ $venv -eq 0 ] || { echo "FAIL: python_venv.sh torch: exit code $venv"; exit 1; }

# Face photos: a verification file of 20 pairs (for pfc verify), one of 4 photos (embedded by
# pfc and by torch: MobileFaceNet's depthwise convolutions are slow in float64), and the
# pixels pfc decodes from the latter.
"$make_faces" "$work/faces" 8 5 112 >/dev/null || { echo "FAIL: pfc_make_faces"; exit 1; }
"$python" "$here/learning/write_verification_bin.py" "$work/faces" 20 5 "$work/pairs.bin" \
  "$work/pairs3.bin" >/dev/null || { echo "FAIL: write_verification_bin.py"; exit 1; }
"$python" - "$work" <<'PY' || { echo "FAIL: the 4-photo .bin"; exit 1; }
import pickle, sys
bins, issame = pickle.load(open(f"{sys.argv[1]}/pairs3.bin", "rb"))
pickle.dump((bins[:4], issame[:2]), open(f"{sys.argv[1]}/four.bin", "wb"))
PY
"$bin_images" "$work/four.bin" 112 "$work/images.f32" || { echo "FAIL: pfc_bin_images"; exit 1; }
mkdir -p "$work/m"
(cd "$models" && "$torch_python" -W ignore write_models.py "$work/images.f32" "$work/m") ||
  { echo "FAIL: write_models.py"; exit 1; }
m="$work/m"

common=(--set fp16=false --set embedding_size=64 --set num_classes=7 --set batch_size=4
        --set rec=\"synthetic\" --set synthetic_labels=\"uniform\" --set num_image=400
        --set image_size=112 --set frequent=1 --set seed=5)
iresnet=("${common[@]}" --set network=\"custom\" --set layers=[2,2,2,1]
         --set widths=[16,32,64,128])
mbf=("${common[@]}" --set network=\"mbf\")
# Masking and DropPath are training's: inference, and so the embeddings, have neither.
vit=("${common[@]}" --set network=\"vit\" --set embed_dim=32 --set depth=2 --set num_heads=4
     --set mask_ratio=0.1 --set drop_path_rate=0.1)

# import MODEL NET REFERENCE: pfc import into $work/run_<model's name>, pfc embed of the .bin,
# compared with torch's embeddings REFERENCE.
import_and_embed() {
  local model=$1 net=$2 reference=$3 run="$work/run_$(basename "$1" | tr . _)"
  local -n args=$net
  if ! "$PFC" import "$model" "$run" --config input/smoke.toml "${args[@]}" \
      >"$run.import.log" 2>&1; then
    fail "pfc import $(basename "$model"): exit code $?"
    cat "$run.import.log"
    return
  fi
  [ -f "$run/ckpt/step_0000000/model.h5" ] || fail "$run has no checkpoint at step 0"
  "$PFC" embed "$run" "$work/four.bin" --output "$run.h5" >"$run.embed.log" 2>&1 ||
    { fail "pfc embed of the import of $(basename "$model")"; cat "$run.embed.log"; return; }
  "$python" "$models/compare_embeddings.py" "$run.h5" "$reference" 64 ||
    fail "pfc embed of the import of $(basename "$model") is not torch's embeddings"
}
import_and_embed "$m/iresnet.pt" iresnet "$m/iresnet"
import_and_embed "$m/iresnet.onnx" iresnet "$m/iresnet"
import_and_embed "$m/mbf.pt" mbf "$m/mbf"
import_and_embed "$m/mbf.onnx" mbf "$m/mbf"
import_and_embed "$m/vit.pt" vit "$m/vit"
import_and_embed "$m/vit.onnx" vit "$m/vit"
import_and_embed "$m/iresnet_half.pt" iresnet "$m/iresnet_half"
import_and_embed "$m/iresnet_views.pt" iresnet "$m/iresnet"
grep -q "batch norms were folded into the convolutions" "$work/run_iresnet_onnx.import.log" ||
  fail "the import of a folded ONNX model does not say its batch norms were folded"
grep -q "mask_token: read by training's masking alone" "$work/run_vit_onnx.import.log" ||
  fail "the import of a ViT's ONNX model does not say that it has no mask_token"
"$python" - "$work/run_iresnet_pt/ckpt/step_0000000/model.h5" "$m/iresnet.pt" <<'PY' ||
import sys, h5py
config = h5py.File(sys.argv[1], "r")["state"].attrs["config"]
config = config.decode() if isinstance(config, bytes) else config
assert f'pretrained = "{sys.argv[2]}"' in config, config[-400:]
PY
  fail "the imported run's config does not record pretrained"

# The imported run is a run: pfc export and pfc verify take it.
"$PFC" export "$work/run_mbf_pt" "$work/mbf.onnx" >"$work/export.log" 2>&1 ||
  { fail "pfc export of an imported run"; cat "$work/export.log"; }
"$torch_python" "$PFC_SOURCE_DIR/tests/support/onnx_embed.py" "$work/mbf.onnx" \
  "$work/images.f32" "$work/mbf_ort.f32" >/dev/null || fail "onnxruntime on the export"
"$python" "$models/compare_embeddings.py" "$work/mbf_ort.f32" "$m/mbf" 64 ||
  fail "onnxruntime's embeddings of the imported run's export are not torch's"
"$PFC" export "$work/run_vit_pt" "$work/vit.onnx" >"$work/export_vit.log" 2>&1 ||
  { fail "pfc export of an imported ViT run"; cat "$work/export_vit.log"; }
"$torch_python" "$PFC_SOURCE_DIR/tests/support/onnx_embed.py" "$work/vit.onnx" \
  "$work/images.f32" "$work/vit_ort.f32" 3 >/dev/null || fail "onnxruntime on the ViT's export"
"$python" "$models/compare_embeddings.py" "$work/vit_ort.f32" "$m/vit" 64 ||
  fail "onnxruntime's embeddings of the imported ViT run's export are not torch's"
"$PFC" verify "$work/run_iresnet_pt" "$work/pairs.bin" >"$work/verify.log" 2>&1 ||
  { fail "pfc verify of an imported run"; cat "$work/verify.log"; }
grep -qE "^\[pairs\]Accuracy-Flip: [01]\.[0-9]{5}" "$work/verify.log" ||
  fail "pfc verify of an imported run prints no accuracy"

# Fine-tuning on another class count: two steps from model.pt with pretrained.
timeout 300 "$PFC" train input/smoke.toml "${iresnet[@]}" --set steps=2 --set checkpoint_every=0 \
  --set pretrained=\"$m/iresnet.pt\" --set output=\"$work/tuned\" >"$work/tuned.log" 2>&1 ||
  { fail "pfc train with pretrained: exit code $?"; cat "$work/tuned.log"; }
grep -q "pretrained: the backbone of PyTorch state_dict '$m/iresnet.pt'" "$work/tuned.log" ||
  fail "the fine-tuning run does not log its pretrained backbone"
[ -f "$work/tuned/ckpt/step_0000002/model.h5" ] || fail "the fine-tuning run wrote no step 2"
# The imported run continued with resume = true is the same run, loss for loss.
timeout 300 "$PFC" train input/smoke.toml "${iresnet[@]}" --set steps=2 --set checkpoint_every=0 \
  --set resume=true --set output=\"$work/run_iresnet_pt\" >"$work/resumed.log" 2>&1 ||
  { fail "resume = true on the imported run: exit code $?"; cat "$work/resumed.log"; }
losses() { grep -o "Loss [0-9.]*" "$1"; }
[ -n "$(losses "$work/tuned.log")" ] &&
  [ "$(losses "$work/tuned.log")" = "$(losses "$work/resumed.log")" ] ||
  fail "the imported run resumed does not repeat the pretrained run's losses:
$(losses "$work/tuned.log") / $(losses "$work/resumed.log")"
# From a pfc run, on yet another class count.
timeout 300 "$PFC" train input/smoke.toml "${iresnet[@]}" --set steps=1 --set num_classes=5 \
  --set pretrained=\"$work/tuned\" --set output=\"$work/tuned2\" >"$work/tuned2.log" 2>&1 ||
  { fail "pfc train with pretrained = a pfc run: exit code $?"; cat "$work/tuned2.log"; }
grep -q "pretrained: the backbone of checkpoint '$work/tuned/ckpt/step_0000002'" \
  "$work/tuned2.log" || fail "pretrained = a run does not take its latest checkpoint"

# Refusals: exit 2, the file and the tensor named, nothing written.
refuse() {
  local name=$1 model=$2
  shift 2
  expect_exit 2 "$name" "$model" "$@" -- "$PFC" import "$model" "$work/refused_$name" \
    --config input/smoke.toml "${iresnet[@]}"
  [ ! -e "$work/refused_$name/ckpt" ] || fail "$name: a refused import wrote a checkpoint"
}
refuse wide_pt "$m/iresnet_wide.pt" "does not hold the network" "conv1.weight" "[32, 3, 3, 3]"
refuse double "$m/iresnet_double.pt" "tensor 'conv1.weight'" "torch.DoubleStorage"
refuse legacy "$m/iresnet_legacy.pt" "legacy format"
refuse foreign "$m/iresnet_foreign.pt" "GLOBAL ('c') 'os.system' is refused" "never imports"
refuse short "$m/iresnet_short.pt" "tensor 'conv1.weight'" "truncated"
refuse cut "$m/iresnet_cut.pt" "not a readable zip archive"
refuse not_torch "$m/not_torch.zip" "without <name>/data.pkl"
refuse mbf_as_iresnet "$m/mbf.onnx" "does not hold the network"
expect_exit 2 into_a_run "already holds a run" -- "$PFC" import "$m/iresnet.pt" \
  "$work/run_iresnet_pt" --config input/smoke.toml "${iresnet[@]}"
expect_exit 2 pretrained_mismatch "iresnet_wide.pt" "conv1.weight" -- "$PFC" train \
  input/smoke.toml "${iresnet[@]}" --set steps=1 --set pretrained=\"$m/iresnet_wide.pt\" \
  --set output=\"$work/mismatch\"
[ ! -e "$work/mismatch/metrics.h5" ] || fail "a refused pretrained backbone left a metrics.h5"

[ $failures -eq 0 ]
