#!/usr/bin/env bash
# pfc embed and pfc export never write over what they read, and say what is wrong before the
# work: an --output that is one of the inputs (the .bin, a dataset's index, the checkpoint's
# model.h5, the run's metrics.h5; spelled with ./ or through a link) is refused, exit 2, the
# file untouched; '' or a missing folder is refused; a second embed into an output another
# one is writing is refused naming it; SIGINT, SIGTERM, SIGHUP or SIGQUIT during an embed
# removes OUT.tmp and the MPI session folder (pfc-mpi.* in $TMPDIR) and keeps the earlier OUT;
# a --batch-size of 0, or one whose images alone outgrow the host's memory, is refused naming
# it; a folder's other files are counted by extension, not skipped without a word; a record
# labelled 0.5 is refused, not written as 0.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/face_data_support.sh"
. "$here/check_support.sh"
learning="$PFC_SOURCE_DIR/tests/integration/learning"

"$make_faces" "$work/faces" 10 4 112 >/dev/null || { echo "FAIL: pfc_make_faces"; exit 1; }
"$PFC" pack "$work/faces" "$work/data/train" >"$work/pack.log" 2>&1 ||
  { echo "FAIL: pfc pack"; cat "$work/pack.log"; exit 1; }
"$python" "$learning/write_verification_bin.py" "$work/faces" 20 5 "$work/data/pairs.bin" \
  "$work/data/pairs3.bin" >/dev/null || { echo "FAIL: write_verification_bin.py"; exit 1; }
run=$work/run
"$PFC" train input/smoke.toml --set network=\"custom\" --set image_size=112 \
  --set widths=[8,8,16,16] --set embedding_size=16 --set rec=\""$work/data"\" \
  --set num_classes=10 --set num_image=40 --set batch_size=4 --set steps=2 \
  --set checkpoint_every=0 --set output=\""$run"\" >"$work/train.log" 2>&1 ||
  { echo "FAIL: pfc train"; cat "$work/train.log"; exit 1; }
step=$run/ckpt/step_0000002
[ -f "$step/model.h5" ] || { echo "FAIL: no checkpoint $step"; exit 1; }
digest() { (cd "$work" && sha256sum data/* "${run#"$work/"}"/metrics.h5 "${step#"$work/"}"/*); }
before=$(digest)
unchanged() { [ "$(digest)" = "$before" ] || fail "$1 changed an input"; }

# ---- an output that is an input ---------------------------------------------------------------
reads="which this command reads"
expect_exit 2 bin_itself "--output '$work/data/./pairs.bin' is" "$reads" -- \
  "$PFC" embed "$run" "$work/data/pairs.bin" --output "$work/data/./pairs.bin"
ln -s data/pairs.bin "$work/link.h5"
expect_exit 2 bin_by_link "$reads" -- \
  "$PFC" embed "$run" "$work/data/pairs.bin" --output "$work/link.h5"
expect_exit 2 model_h5 "'$step/model.h5'" "$reads" -- \
  "$PFC" embed "$run" "$work/data/pairs.bin" --output "$step/model.h5"
expect_exit 2 metrics_h5 "$reads" -- \
  "$PFC" embed "$step" "$work/data/pairs.bin" --output "$run/metrics.h5"
expect_exit 2 dataset_index "$reads" -- \
  "$PFC" embed "$run" "$work/data" --output "$work/data/train.idx"
expect_exit 2 export_model_h5 "MODEL.onnx '$step/model.h5'" "$reads" -- \
  "$PFC" export "$run" "$step/model.h5"
unchanged "a refused output"

# ---- paths that cannot take the file ----------------------------------------------------------
expect_exit 2 export_empty "MODEL.onnx '' names no file" -- "$PFC" export "$run" ''
expect_exit 2 embed_empty "--output '' names no file" -- \
  "$PFC" embed "$run" "$work/data/pairs.bin" --output ''
expect_exit 2 embed_no_folder "its folder '$work/missing' does not exist" -- \
  "$PFC" embed "$run" "$work/data/pairs.bin" --output "$work/missing/emb.h5"
[ ! -e "$work/missing" ] || fail "a refused embed created $work/missing"

# ---- two embeds into one output ----------------------------------------------------------------
# Another process holds the temporary (the lock's holder is the sleep itself, so that killing
# it releases the lock).
(exec 9>"$work/emb.h5.tmp" && flock 9 && exec sleep 120) &
holder=$!
for _ in $(seq 100); do [ -e "$work/emb.h5.tmp" ] && break; sleep 0.05; done
expect_exit 2 second_embed "'$work/emb.h5' is being written by another process now" -- \
  "$PFC" embed "$run" "$work/data/pairs.bin" --output "$work/emb.h5"
kill "$holder"
wait "$holder" 2>/dev/null
[ ! -e "$work/emb.h5" ] || fail "the refused embed wrote $work/emb.h5"
# The temporary the other one left (no longer held) is taken over.
expect_exit 0 stale_temporary "wrote 40 embeddings" -- \
  "$PFC" embed "$run" "$work/data/pairs.bin" --output "$work/emb.h5"
[ ! -e "$work/emb.h5.tmp" ] || fail "embed left emb.h5.tmp"

# ---- interrupted ---------------------------------------------------------------------------------
emb_sum=$(sha256sum <"$work/emb.h5")
folders=()
for _ in $(seq 40); do folders+=("$work/faces"); done  # 1600 images
mkdir "$work/tmpdir"
for signal in INT TERM HUP QUIT; do
  TMPDIR="$work/tmpdir" "$python" - "$PFC" "$run" "$work/emb.h5" "$signal" "${folders[@]}" \
    <<'PY' || fail "SIG$signal"
import os, resource, signal, subprocess, sys, time
pfc, run, out, name, *inputs = sys.argv[1:]
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGQUIT's default action dumps core
p = subprocess.Popen([pfc, "embed", run, *inputs, "--output", out, "--batch-size", "1"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 60
while not os.path.exists(out + ".tmp") and p.poll() is None and time.time() < deadline:
    time.sleep(0.002)
time.sleep(0.2)
p.send_signal(getattr(signal, "SIG" + name))
rc = p.wait()
sys.exit(0 if rc == -getattr(signal, "SIG" + name) else f"pfc embed ended with {rc}")
PY
  [ ! -e "$work/emb.h5.tmp" ] || fail "SIG$signal left emb.h5.tmp"
  [ "$(sha256sum <"$work/emb.h5")" = "$emb_sum" ] || fail "SIG$signal changed the earlier emb.h5"
  [ -z "$(ls -A "$work/tmpdir")" ] || fail "SIG$signal left $(ls -A "$work/tmpdir") in \$TMPDIR"
done

# ---- batch sizes that cannot work -----------------------------------------------------------
expect_exit 2 batch_zero "--batch-size: 0 must be at least 1 image" -- \
  "$PFC" embed "$run" "$work/data/pairs.bin" --output "$work/batch.h5" --batch-size 0
expect_exit 2 batch_huge "--batch-size 1000000000: one batch's input images alone take" \
  "GiB" "lower it" -- \
  "$PFC" embed "$run" "$work/data/pairs.bin" --output "$work/batch.h5" --batch-size 1000000000
[ ! -e "$work/batch.h5" ] && [ ! -e "$work/batch.h5.tmp" ] || fail "a refused batch size wrote"

# ---- what a folder holds besides images ------------------------------------------------------
mkdir -p "$work/mixed/sub" "$work/nothing"
cp "$work/faces/id_000/img_00.jpg" "$work/faces/id_001/img_01.jpg" "$work/mixed/"
printf 'notes' >"$work/mixed/notes.txt"
printf 'GIF89a' >"$work/mixed/sub/anim.gif"
printf 'x' >"$work/mixed/README"
expect_exit 0 mixed_folder "skipped the files that are not images pfc reads (" \
  "): 1 without an extension, 1 .gif, 1 .txt" "wrote 2 embeddings" -- \
  "$PFC" embed "$run" "$work/mixed" --output "$work/mixed.h5"
cp "$work/mixed/notes.txt" "$work/nothing/"
expect_exit 2 no_images "folder '$work/nothing' holds no image pfc reads (" "it holds 1 .txt" -- \
  "$PFC" embed "$run" "$work/nothing" --output "$work/nothing.h5"

# ---- a label that is no identity -----------------------------------------------------------------
cp -r "$work/data" "$work/half"
"$python" - "$work/half" <<'PY' || fail "cannot write label 0.5 into the dataset copy"
import struct, sys
folder = sys.argv[1]
offsets = dict(line.split("\t") for line in open(f"{folder}/train.idx").read().split("\n") if line)
with open(f"{folder}/train.rec", "r+b") as rec:
    rec.seek(int(offsets["3"]) + 8 + 4)  # RecordIO magic and length, then flag, then label
    rec.write(struct.pack("<f", 0.5))
PY
expect_exit 2 label_half "record key 3: label 0.5 is not an identity of the dataset" -- \
  "$PFC" embed "$run" "$work/half" --output "$work/half.h5"
[ ! -e "$work/half.h5" ] && [ ! -e "$work/half.h5.tmp" ] || fail "the refused embed wrote half.h5"
unchanged "the embeds"
[ "$failures" -eq 0 ]
