#!/usr/bin/env bash
# Class centres stored in 16 bits (classifier_storage) keep their bits through checkpoints:
#  - f16, PFC 0.1 on 2 ranks: 10 steps straight and 5 + a resume for 5 print the same losses
#    and end in the same checkpoint, tensor for tensor (the stochastic rounding's draws are
#    keyed by the update count the checkpoint keeps);
#  - the checkpoint stores f16 (h5py reads float16), and re-split for 3 ranks and back for 2
#    it holds exactly the state saved; 3 ranks then train on from it;
#  - AdamW beside f16 centres: its moments are stored in bf16 (h5py reads bf16 as float32);
#  - resumed with another classifier_storage, the centres are converted once, with a notice:
#    f16 -> f32 keeps every value (the same global matrix, widened), and f32 -> bf16 rounds.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
out=$work
common=(--set 'method="pfc"' --set sample_rate=0.1 --set frequent=1 --set checkpoint_every=5
        --set steps=10)
train() {  # train RANKS OUTPUT ARGS...: a run of input/smoke.toml with the settings above
  local ranks=$1 output=$2
  shift 2
  mpiexec -n "$ranks" "$PFC" train input/smoke.toml "${common[@]}" --set output=\"$output\" "$@" \
    > "$output.log" 2>&1 || { cat "$output.log"; exit 1; }
}
losses() { grep -o "Loss [0-9.]*" "$1" | awk '{print $2}'; }
f16=(--set 'classifier_storage="f16"')

train 2 "$out/straight" "${f16[@]}"
train 2 "$out/split" "${f16[@]}" --set steps=5
train 2 "$out/split" "${f16[@]}" --set resume=true
grep -q "resumed from $out/split/ckpt/step_0000005 at step 5" "$out/split.log"
diff <(losses "$out/straight.log" | tail -n 5) <(losses "$out/split.log")
echo -n "f16 centres, 10 straight == 5 + resume 5 (losses and checkpoint): "
"$python" tests/integration/same_checkpoint.py "$out/straight/ckpt/step_0000010" \
  "$out/split/ckpt/step_0000010"

# stored_types FOLDER WEIGHT MOMENT...: the numpy types h5py reads the class views in.
stored_types() {
  "$python" - "$@" <<'PY'
import sys, h5py
folder, want = sys.argv[1], sys.argv[2:]
with h5py.File(folder + "/model.h5", "r") as f:
    moments = f["pfc"].attrs["moments"]
    moments = (moments.decode() if isinstance(moments, bytes) else moments).split()
    got = [str(f["pfc/" + name].dtype) for name in ["weight"] + moments]
    got += [str(h5py.File(folder + "/shard_00000.h5", "r")["weight"].dtype)]
if got != want + [want[0]]:
    sys.exit(f"{folder}: the class views and shard 0 read as {got}, expected {want}")
PY
}
stored_types "$out/split/ckpt/step_0000010" float16 float16

train 3 "$out/resplit-3" "${f16[@]}" --set resume_from=\"$out/split/ckpt/step_0000010\"
train 2 "$out/resplit-2" "${f16[@]}" --set resume_from=\"$out/resplit-3\"
echo -n "f16 centres, 2 -> 3 -> 2 ranks: "
"$python" tests/integration/same_checkpoint.py "$out/split/ckpt/step_0000010" \
  "$out/resplit-3/ckpt/step_0000010" "$out/resplit-2/ckpt/step_0000010" --world-sizes 3,2
train 3 "$out/resplit-3" "${f16[@]}" --set resume=true --set steps=12
grep -q "Global Step: 12" "$out/resplit-3.log"
echo "3 ranks trained on to step 12"

train 2 "$out/adamw" "${f16[@]}" --set 'optimizer="adamw"' --set lr=0.001 --set steps=2
stored_types "$out/adamw/ckpt/step_0000002" float16 float32 float32
"$python" - "$out/adamw/ckpt/step_0000002" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1] + "/shard_00000.h5", "r") as f:
    t = f["exp_avg"].id.get_type()
    assert t.get_size() == 2 and t.get_fields()[2:] == (8, 0, 7), t.get_fields()
PY
echo "AdamW beside f16 centres: bf16 moments"

# Another storage type on resume: converted once, with a notice.
train 2 "$out/as_f32" --set resume_from=\"$out/split/ckpt/step_0000010\" --set steps=10
grep -q "stores the class centres in f16, this run in f32 (classifier_storage): converted once" \
  "$out/as_f32.log" || { cat "$out/as_f32.log"; exit 1; }
stored_types "$out/as_f32/ckpt/step_0000010" float32 float32
"$python" - "$out/split/ckpt/step_0000010" "$out/as_f32/ckpt/step_0000010" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p + "/model.h5", "r") for p in sys.argv[1:])
for name in ("pfc/weight", "pfc/momentum"):
    assert np.array_equal(a[name][()].astype(np.float32), b[name][()]), name
PY
train 2 "$out/as_bf16" --set resume_from=\"$out/as_f32/ckpt/step_0000010\" --set steps=10 \
  --set 'classifier_storage="bf16"'
grep -q "stores the class centres in f32, this run in bf16 (classifier_storage): converted once" \
  "$out/as_bf16.log" || { cat "$out/as_bf16.log"; exit 1; }
stored_types "$out/as_bf16/ckpt/step_0000010" float32 float32
echo "f16 -> f32 (exact) -> bf16: converted once, with a notice"
