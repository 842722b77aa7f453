#!/usr/bin/env bash
# Model files from strangers, in bounded time and memory, without PyTorch (the files are made
# here: import/write_hostile_models.py). Each refusal is exit 2 naming the file (and the
# tensor or node), leaves no RUN_DIR, and stays under `timeout` with a peak resident memory
# (/usr/bin/time) within 128 MB of a genuine import of the same network:
#  - a state_dict with a NaN or an infinity (pfc import, and pretrained in pfc train);
#  - a 1 GiB storage of zeros deflated into a few MB, an archive of 500 bytes whose storage
#    claims 1.5 GiB, 400 views of one 4 MB storage, a data.pkl of 20 million EMPTY_TUPLE
#    opcodes: each was read whole (1.2 to 4.7 GB) before any name or size was checked;
#  - a FIFO given as the model (it blocked the import forever);
#  - ONNX Identity nodes that feed each other (an endless loop), while a chain of 30000 of
#    them reads in seconds (it took minutes);
#  - file types by their bytes: pfc export's ONNX model named model.pth or MODEL.ONNX imports;
#  - a classifier that cannot fit is refused by the memory check, after the model's.
set -uo pipefail
. "$(dirname "$0")/run_support.sh"

"$PFC" train input/smoke.toml --set steps=1 --set output=\"$work/run\" >"$work/train.log" 2>&1 ||
  { cat "$work/train.log"; echo "FAIL: pfc train"; exit 1; }
"$PFC" export "$work/run" "$work/model.onnx" >"$work/export.log" 2>&1 ||
  { cat "$work/export.log"; echo "FAIL: pfc export"; exit 1; }
m="$work/m"
mkdir -p "$m"
"$python" "$here/import/write_hostile_models.py" "$work/run/ckpt/step_0000001/model.h5" \
  "$work/model.onnx" "$m" || { echo "FAIL: write_hostile_models.py"; exit 1; }
ls -l "$m"

# run_import NAME MODEL [ARGS]: pfc import MODEL into $work/out_NAME under `timeout` ($seconds,
# default 60), its peak memory (KB) in $work/NAME.rss.
run_import() {
  local name=$1 model=$2
  shift 2
  /usr/bin/time -f %M -o "$work/$name.rss" timeout -k 5 "${seconds:-60}" \
    "$PFC" import "$model" "$work/out_$name" --config input/smoke.toml "$@"
}
run_import genuine "$m/genuine.pt" >"$work/genuine.log" 2>&1 ||
  { cat "$work/genuine.log"; fail "pfc import of the genuine state_dict"; }
baseline=$(tail -n 1 "$work/genuine.rss")
echo "peak memory of a genuine import: $baseline KB"

# refuse NAME MODEL PATTERN...: exit 2 with every PATTERN, nothing written, memory bounded.
refuse() {
  local name=$1 model=$2
  shift 2
  expect_exit 2 "$name" "$model" "$@" -- run_import "$name" "$model"
  [ ! -e "$work/out_$name" ] || fail "$name: a refused import left $work/out_$name"
  local rss
  rss=$(tail -n 1 "$work/$name.rss" 2>/dev/null)
  [[ "$rss" =~ ^[0-9]+$ ]] && [ "$rss" -le $((baseline + 131072)) ] ||
    fail "$name: peak memory ${rss:-unknown} KB, more than 128 MB above a genuine import's"
  echo "     $name: peak memory $rss KB"
}
refuse nan "$m/nan.pt" "PyTorch state_dict '$m/nan.pt'" "holds NaN"
refuse inf "$m/inf.pt" "holds an infinity"
refuse zeros_1g "$m/zeros_1g.pt" "holds 1073741824 bytes, more than"
refuse claims_1_5g "$m/claims_1_5g.pt" "claims 1610612736 bytes"
refuse views_400 "$m/views_400.pt" "(a PyTorch state_dict)"
refuse tuples_20m "$m/tuples_20m.pt" "data.pkl holds 20000003 bytes, more than"
mkfifo "$work/fifo.pt"
refuse fifo "$work/fifo.pt" "is a FIFO (named pipe), not a file"
refuse cycle "$m/cycle.onnx" "feed each other in a cycle" "Identity '"
seconds=20 expect_exit 0 chain "" -- run_import chain "$m/chain.onnx"

# By the bytes, not the name.
cp "$work/model.onnx" "$work/model.pth"
cp "$work/model.onnx" "$work/MODEL.ONNX"
expect_exit 0 onnx_as_pth "" -- run_import onnx_as_pth "$work/model.pth"
expect_exit 0 onnx_upper_case "" -- run_import onnx_upper_case "$work/MODEL.ONNX"

# pretrained in pfc train: the same refusal at load, before any step.
expect_exit 2 pretrained_nan "$m/nan.pt" "holds NaN" -- "$PFC" train input/smoke.toml \
  --set steps=2 --set pretrained=\"$m/nan.pt\" --set output=\"$work/tuned_nan\"
grep -q "Loss [0-9]" "$work/pretrained_nan.log" && fail "pretrained_nan: training started"

# The memory check, as pfc train's: a classifier far beyond the host, refused before writing.
expect_exit 2 too_many_classes "needs at least" -- run_import too_many_classes "$m/genuine.pt" \
  --set num_classes=100000000000
[ ! -e "$work/out_too_many_classes" ] || fail "too_many_classes: the import left its RUN_DIR"

[ $failures -eq 0 ]
