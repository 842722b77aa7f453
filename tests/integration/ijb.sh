#!/usr/bin/env bash
# `pfc ijb` and `pfc pack --landmarks` end to end on the CPU, on a synthetic IJB-C made here
# (pfc_make_ijb: face photos placed into larger loose crops by random similarities, their
# landmarks moved the same way; templates of several medias; genuine and impostor pairs):
#  - pfc ijb's TAR table, AUC, ROC, scores and template features equal eval_ijbc.py's steps
#    transcribed in numpy (ijb/eval_ijbc_reference.py) run on pfc ijb's own /image_features and
#    the faceness scores; the same on 2 ranks, and for --target IJBB;
#  - bad input (a missing meta file, a wrong field count, a NaN landmark, landmarks that all
#    coincide, an image that does not decode, a pair naming an unknown template, an image
#    listed twice, ...): a message naming the file and the line, exit code 2, before any
#    embedding and without an output file; an --output that is not pfc's is left alone;
#  - image names that are not image files (a folder, a FIFO, a 1 GB file) or lead outside ROOT
#    ('../', an absolute path) are refused as what they are, under `timeout`, unless
#    --images-outside-root; a UTF-8 byte-order mark in the meta files is skipped;
#  - SIGTERM during the embedding pass: exit 1, no output and no temporary file; a second
#    signal ends it at once, the temporary removed; every faceness score 0, or a --batch-size
#    of 0 or beyond the host's memory: exit 2 naming it;
#  - pfc report shows the TAR table, jobs/plot_report.py --ijb draws the ROC (matplotlib);
#  - pfc pack --landmarks aligns the raw photos into 112x112 records that pfc embed reads;
#    a bad landmark file is refused naming the line (a photo outside the photo folder, a FIFO
#    or a folder as what it is); pfc embed refuses a FIFO or a 1 GB file named as an image;
#  - from PyPI (a virtual environment under the build folder; skipped when PyPI cannot be
#    reached): sklearn's roc_curve and auc equal the transcription's, and pfc's crops are within
#    1 grey level of cv2.warpAffine's on average, its transforms within 1e-6 of skimage's.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/face_data_support.sh"
. "$here/check_support.sh"
make_ijb="$PFC_BINARY_DIR/bin/pfc_make_ijb"
align_faces="$PFC_BINARY_DIR/bin/pfc_align_faces"
for tool in "$make_ijb" "$align_faces"; do
  [ -x "$tool" ] || { echo "skipped: $tool is not built"; exit 77; }
done
start=$SECONDS

"$make_ijb" "$work/ijb" ijbc 10 --size 112 --impostors 8 --photos "$work/photos" ||
  { echo "FAIL: pfc_make_ijb"; exit 1; }
images=$(wc -l <"$work/ijb/meta/ijbc_face_tid_mid.txt")
net=(--set image_size=112 --set steps=1 --set checkpoint_every=0 --set frequent=1)
"$PFC" train input/smoke.toml "${net[@]}" --set output=\"$work/run\" >"$work/train.log" 2>&1 ||
  { echo "FAIL: pfc train"; cat "$work/train.log"; exit 1; }
echo "data and network: $((SECONDS - start)) s"

# ---- the table, against the transcription of eval_ijbc.py --------------------------------
result="$work/run/ijbc_step_0000001.h5"
"$PFC" ijb "$work/run" "$work/ijb" --target IJBC --batch-size 16 >"$work/ijb.log" 2>&1 ||
  { echo "FAIL: pfc ijb: exit code $?"; cat "$work/ijb.log"; exit 1; }
cat "$work/ijb.log"
[ -f "$result" ] || fail "no $result (the default output beside the run)"
row() {  # row LOG METHOD: the numbers of the table's row
  grep -F "| $2 |" "$1" | tr -d '|' | awk '{$1 = ""; print substr($0, 2)}'
}
ours=$(row "$work/ijb.log" ijbc-IJBC)
reference=$("$python" "$here/ijb/eval_ijbc_reference.py" "$result" "$work/ijb" IJBC \
  "$work/arrays.npz") || fail "pfc ijb differs from eval_ijbc.py's steps"
echo "$reference"
reference_row=$(echo "$reference" | grep '^reference ' | sed 's/^reference [^:]*: //; s/  AUC.*//')
[ -n "$ours" ] && [ "$ours" = "$reference_row" ] ||
  fail "the printed table '$ours' is not the reference's '$reference_row'"
grep -q "embedded $images of $images images" "$work/ijb.log" || fail "no progress line"

# 2 ranks share the images: the same features, bit for bit, and the same table.
timeout 300 mpiexec -n 2 "$PFC" ijb "$work/run" "$work/ijb" --output "$work/two_ranks.h5" \
  --batch-size 16 >"$work/ijb2.log" 2>&1 ||
  { fail "pfc ijb on 2 ranks: exit code $?"; cat "$work/ijb2.log"; }
[ "$(row "$work/ijb2.log" ijbc-IJBC)" = "$ours" ] || fail "2 ranks print another table"
# IJB-B's file names, the same data.
mkdir -p "$work/ijbb/meta"
ln -s "$work/ijb/loose_crop" "$work/ijbb/loose_crop"
for f in face_tid_mid name_5pts_score template_pair_label; do
  cp "$work/ijb/meta/ijbc_$f.txt" "$work/ijbb/meta/ijbb_$f.txt"
done
"$PFC" ijb "$work/run" "$work/ijbb" --target IJBB --output "$work/ijbb.h5" >"$work/ijbb.log" 2>&1 ||
  { fail "pfc ijb --target IJBB: exit code $?"; cat "$work/ijbb.log"; }
[ "$(row "$work/ijbb.log" ijbb-IJBB)" = "$ours" ] || fail "IJBB prints another table"
"$python" - "$result" "$work/two_ranks.h5" "$work/ijbb.h5" <<'PY' || fail "2 ranks / IJBB files"
import sys, h5py, numpy as np
one, two, b = (h5py.File(p, "r") for p in sys.argv[1:])
assert np.array_equal(one["image_features"][:], two["image_features"][:]), "features differ"
for f in (two, b):
    for k in ("auc", "tar_at_far_1e-4"):
        assert f.attrs[k] == one.attrs[k], (k, f.attrs[k], one.attrs[k])
assert b.attrs["ijb_target"] == "IJBB" and one.attrs["ijb_target"] == "IJBC"
assert one.attrs["images"] == one["image_features"].shape[0] == len(one["image_names"])
assert one["roc/fpr"].shape == one["roc/tpr"].shape == one["roc/thresholds"].shape
PY

# ---- bad input --------------------------------------------------------------------------
# bad NAME EDIT PATTERN...: a copy of the data set's meta files (the images shared), EDIT run
# in its meta folder, then pfc ijb: exit 2, every PATTERN in its words, nothing embedded.
bad() {
  local name=$1 edit=$2
  shift 2
  local root="$work/bad_$name"
  mkdir -p "$root"
  cp -r "$work/ijb/meta" "$root/meta"
  ln -s "$work/ijb/loose_crop" "$root/loose_crop"
  (cd "$root/meta" && eval "$edit")
  expect_exit 2 "$name" "$@" -- "$PFC" ijb "$work/run" "$root" --output "$work/bad_$name.h5"
  grep -q "embedded" "$work/$name.log" && fail "$name: embedding started"
  [ -e "$work/bad_$name.h5" ] && fail "$name: an output was written"
}
meta="ijbc_name_5pts_score.txt"
bad missing_meta "rm ijbc_template_pair_label.txt" "ijbc_template_pair_label.txt' is missing"
bad field_count "sed -i '3s/ [0-9]*\$//' ijbc_face_tid_mid.txt" \
  "ijbc_face_tid_mid.txt' line 3" "2 fields where 3 are expected"
bad nan_landmark "sed -i '4s/^\([^ ]*\) \([^ ]*\) \([^ ]*\) [^ ]*/\1 \2 \3 nan/' $meta" \
  "$meta' line 4" "landmark 2 has x = nan"
bad degenerate_landmarks "sed -i '5s/^\([^ ]*\) .* \([^ ]*\)\$/\1 9 9 9 9 9 9 9 9 9 9 \2/' $meta" \
  "$meta' line 5" "coincide"
bad unknown_template "echo '99999 100 1' >>ijbc_template_pair_label.txt" \
  "ijbc_template_pair_label.txt' line" "template 99999 is not in"
bad duplicate_image "sed -i '6s/^[^ ]*/2.jpg/' ijbc_face_tid_mid.txt" \
  "ijbc_face_tid_mid.txt' line 6" "'2.jpg' is listed a second time"
bad order "sed -i '2s/^[^ ]*/3.jpg/' $meta" "$meta' line 2" "names image '3.jpg' where line 2"
bad label "sed -i '1s/ [01]\$/ 2/' ijbc_template_pair_label.txt" \
  "ijbc_template_pair_label.txt' line 1" "label 2 is neither"
bad short_landmarks "sed -i '\$d' $meta" "$meta' has $((images - 1)) lines for the $images images"
bad weightless "sed -i 's/ [^ ]*\$/ 0/' $meta" "every faceness_score in '" "$meta' is 0" \
  "no template holds any weight"
expect_exit 2 batch_zero "--batch-size: 0 must be at least 1 image" -- \
  "$PFC" ijb "$work/run" "$work/ijb" --output "$work/batch.h5" --batch-size 0
expect_exit 2 batch_huge "--batch-size 10000000: one batch's input images alone take" "GiB" -- \
  "$PFC" ijb "$work/run" "$work/ijb" --output "$work/batch.h5" --batch-size 10000000
[ ! -e "$work/batch.h5" ] && [ ! -e "$work/batch.h5.tmp" ] || fail "a refused batch size wrote"
# An image that does not decode: a folder of its own, one image cut short.
mkdir -p "$work/bad_image"
cp -r "$work/ijb/meta" "$work/ijb/loose_crop" "$work/bad_image/"
head -c 300 "$work/ijb/loose_crop/7.jpg" >"$work/bad_image/loose_crop/7.jpg"
expect_exit 2 undecodable "loose_crop/7.jpg' (line 7 of" "JPEG" -- \
  "$PFC" ijb "$work/run" "$work/bad_image" --output "$work/bad_image.h5"
[ -e "$work/bad_image.h5" ] && fail "undecodable: an output was written"
# On 2 ranks the rank that finds it stops the job with the same code.
expect_exit 2 undecodable_2_ranks "loose_crop/7.jpg' (line 7 of" -- \
  timeout 120 mpiexec -n 2 "$PFC" ijb "$work/run" "$work/bad_image" --output "$work/bad2.h5"
# Image names that are not image files, or lead outside ROOT: refused as what they are, at
# once (a FIFO under `timeout`: it must never be waited on), without an output.
# odd NAME EDIT PATTERN... [-- ARGS]: a copy of ROOT, EDIT run in it, then pfc ijb: exit 2.
odd() {
  local name=$1 edit=$2 root="$work/odd_$1"
  shift 2
  mkdir -p "$root"
  cp -r "$work/ijb/meta" "$work/ijb/loose_crop" "$root/"
  (cd "$root" && eval "$edit")
  expect_exit 2 "$name" "$@" -- timeout -k 5 60 "$PFC" ijb "$work/run" "$root" \
    --output "$work/odd_$name.h5"
  [ -e "$work/odd_$name.h5" ] && fail "$name: an output was written"
}
odd image_folder "rm loose_crop/7.jpg && mkdir loose_crop/7.jpg" \
  "loose_crop/7.jpg' (line 7 of" "is a folder, not a file"
odd image_fifo "rm loose_crop/7.jpg && mkfifo loose_crop/7.jpg" \
  "loose_crop/7.jpg' (line 7 of" "is a FIFO (named pipe), not a file"
odd image_1gb "truncate -s 1G loose_crop/7.jpg" \
  "loose_crop/7.jpg' (line 7 of" "1073741824 bytes" "64 MiB"
mkdir -p "$work/outside"
cp "$work/ijb/loose_crop/7.jpg" "$work/outside/7.jpg"
to_outside() {  # to_outside NAME: image 7 renamed NAME in both image lists
  sed -i "s|^7.jpg |$1 |" meta/ijbc_face_tid_mid.txt meta/ijbc_name_5pts_score.txt
}
odd image_dot_dot "to_outside ../../outside/7.jpg" "ijbc_face_tid_mid.txt' line 7" \
  "'../../outside/7.jpg' lies outside the IJB root" "--images-outside-root"
odd image_absolute "to_outside $work/outside/7.jpg" "ijbc_face_tid_mid.txt' line 7" \
  "lies outside the IJB root" "an absolute path"
"$PFC" ijb "$work/run" "$work/odd_image_dot_dot" --images-outside-root \
  --output "$work/outside.h5" >"$work/outside.log" 2>&1 ||
  { fail "pfc ijb --images-outside-root: exit code $?"; cat "$work/outside.log"; }
[ "$(row "$work/outside.log" ijbc-IJBC)" = "$ours" ] ||
  fail "--images-outside-root: the same images give another table"
# A UTF-8 byte-order mark at the start of a meta file (Windows editors write one) is skipped.
mkdir -p "$work/bom"
cp -r "$work/ijb/meta" "$work/bom/meta"
ln -s "$work/ijb/loose_crop" "$work/bom/loose_crop"
for f in "$work/bom/meta/"*.txt; do
  printf '\xef\xbb\xbf' | cat - "$f" >"$f.new" && mv "$f.new" "$f"
done
"$PFC" ijb "$work/run" "$work/bom" --output "$work/bom.h5" >"$work/bom.log" 2>&1 ||
  { fail "pfc ijb of meta files with a byte-order mark: exit code $?"; cat "$work/bom.log"; }
[ "$(row "$work/bom.log" ijbc-IJBC)" = "$ours" ] || fail "a byte-order mark changes the table"
echo "not pfc's" >"$work/not_ours.h5"
expect_exit 2 output_not_ours "is not a result of pfc ijb" -- \
  "$PFC" ijb "$work/run" "$work/ijb" --output "$work/not_ours.h5"
[ "$(cat "$work/not_ours.h5")" = "not pfc's" ] || fail "the file that is not pfc's was changed"

# ---- SIGTERM during the pass ----------------------------------------------------------
# A wider network and one image a batch, so that the pass lasts long enough to be stopped.
"$PFC" train input/smoke.toml "${net[@]}" --set widths=[64,128,256,512] --set layers=[2,2,2,2] \
  --set batch_size=2 --set output=\"$work/wide\" >"$work/wide.log" 2>&1 ||
  { fail "pfc train (wide)"; cat "$work/wide.log"; }
"$PFC" ijb "$work/wide" "$work/ijb" --output "$work/stopped.h5" --batch-size 1 --threads 1 \
  >"$work/stopped.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
  grep -q "read and aligned" "$work/stopped.log" && break
  sleep 0.1
done
sleep 1
kill -TERM $pid
wait $pid
code=$?
[ $code -eq 1 ] || fail "SIGTERM: exit code $code, expected 1"
grep -q "stopped by a signal" "$work/stopped.log" || fail "SIGTERM: no message"
[ -e "$work/stopped.h5" ] || [ -e "$work/stopped.h5.tmp" ] && fail "SIGTERM: a file was left"
echo "ok   SIGTERM (exit $code, nothing written)"
# A second signal ends it at once, whatever it is doing (blocked in a read, in a long batch):
# sent SIGHUP (the request to stop) in a batch of 32 images through the wide network, which
# takes seconds, then SIGTERM a second later, it ends by SIGTERM, with the temporary removed
# and the earlier result whole. (Not SIGINT: a script's background job ignores it, and an
# ignored signal stays ignored.)
cp "$result" "$work/second.h5"
second_sum=$(sha256sum <"$work/second.h5")
"$PFC" ijb "$work/wide" "$work/ijb" --output "$work/second.h5" --batch-size 32 --threads 1 \
  >"$work/second.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
  grep -q "read and aligned" "$work/second.log" && break
  sleep 0.1
done
kill -HUP $pid && sleep 1 && kill -TERM $pid
code=0
timeout 10 tail --pid=$pid -f /dev/null || fail "second signal: still running 10 s later"
wait $pid || code=$?
[ -e "$work/second.h5.tmp" ] && fail "second signal: second.h5.tmp was left"
[ "$(sha256sum <"$work/second.h5")" = "$second_sum" ] || fail "second signal: second.h5 changed"
if [ $code -eq $((128 + 15)) ]; then
  echo "ok   a second signal (exit $code, the earlier result whole)"
else
  fail "second signal: exit code $code, expected 143 (SIGTERM)"
fi

# ---- pfc report and the ROC figure ------------------------------------------------------
"$PFC" report "$work/run" >"$work/report.md" 2>&1 || { fail "pfc report"; cat "$work/report.md"; }
grep -q "IJB" "$work/report.md" || fail "pfc report has no IJB table"
grep -qF "$(echo "$ours" | awk '{print $3}')" <<<"$(grep -F "$result" "$work/report.md")" ||
  { fail "pfc report's IJB row lacks TAR@1e-4 $(echo "$ours" | awk '{print $3}')";
    cat "$work/report.md"; }
if "$python" -c 'import matplotlib' 2>/dev/null; then
  "$python" jobs/plot_report.py --ijb "$result" "$work/ijbb.h5" --out "$work/plots" ||
    fail "plot_report.py --ijb"
  [[ $(head -c 4 "$work/plots/roc.png" | od -An -c | tr -d ' ') == '211PNG' ]] ||
    fail "roc.png is not a PNG"
fi

# ---- pfc pack --landmarks ---------------------------------------------------------------
"$PFC" pack "$work/photos" "$work/packed/train" --landmarks "$work/photos/landmarks.txt" \
  >"$work/pack.log" 2>&1 || { fail "pfc pack --landmarks: exit code $?"; cat "$work/pack.log"; }
grep -q "packed $images images of 10 identities" "$work/pack.log" ||
  { fail "pack: not every photo packed"; cat "$work/pack.log"; }
"$PFC" embed "$work/run" "$work/packed" --output "$work/packed.h5" >"$work/embed.log" 2>&1 ||
  { fail "pfc embed of the packed photos"; cat "$work/embed.log"; }
cp "$work/photos/landmarks.txt" "$work/landmarks_bad.txt"
sed -i '3s/ [^ ]*$//' "$work/landmarks_bad.txt"
expect_exit 2 pack_field_count "landmarks_bad.txt' line 3" "10 fields" -- \
  "$PFC" pack "$work/photos" "$work/packed_bad/train" --landmarks "$work/landmarks_bad.txt"
echo "id_99999/1.jpg 1 2 3 4 5 6 7 8 9 10" >"$work/landmarks_missing.txt"
expect_exit 2 pack_missing_photo "line 1" "does not exist" -- \
  "$PFC" pack "$work/photos" "$work/packed_bad/train" --landmarks "$work/landmarks_missing.txt"
# A line naming a photo outside the photo folder (pack would never read it), a FIFO, a folder.
first_line() { head -n 1 "$work/photos/landmarks.txt" | awk -v name="$1" '{$1 = name; print}'; }
cp "$work/photos/landmarks.txt" "$work/landmarks_outside.txt"
first_line "$work/outside/7.jpg" >>"$work/landmarks_outside.txt"
expect_exit 2 pack_photo_outside "landmarks_outside.txt' line $(wc -l <"$work/landmarks_outside.txt")" \
  "lies outside the photo folder" -- \
  "$PFC" pack "$work/photos" "$work/packed_bad/train" --landmarks "$work/landmarks_outside.txt"
mkfifo "$work/photos/fifo.jpg"
first_line fifo.jpg >"$work/landmarks_fifo.txt"
expect_exit 2 pack_photo_fifo "line 1" "is a FIFO (named pipe)" -- timeout -k 5 60 \
  "$PFC" pack "$work/photos" "$work/packed_bad/train" --landmarks "$work/landmarks_fifo.txt"
rm "$work/photos/fifo.jpg"
first_line "$(head -n 1 "$work/photos/landmarks.txt" | awk '{print $1}' | xargs dirname)" \
  >"$work/landmarks_folder.txt"
expect_exit 2 pack_photo_folder "line 1" "is a folder" -- \
  "$PFC" pack "$work/photos" "$work/packed_bad/train" --landmarks "$work/landmarks_folder.txt"
[ -e "$work/packed_bad" ] && fail "pack: a refused landmark file left output"
# pfc embed of image files: a FIFO and a 1 GB file named as images are refused as what they are.
mkfifo "$work/embed_fifo.jpg"
expect_exit 2 embed_fifo "embed_fifo.jpg' is a FIFO (named pipe)" -- timeout -k 5 60 \
  "$PFC" embed "$work/run" "$work/embed_fifo.jpg" --output "$work/embed_fifo.h5"
truncate -s 1G "$work/embed_1gb.jpg"
expect_exit 2 embed_1gb "embed_1gb.jpg' holds 1073741824 bytes" "64 MiB" -- timeout -k 5 60 \
  "$PFC" embed "$work/run" "$work/embed_1gb.jpg" --output "$work/embed_1gb.h5"
echo "pfc checks: $((SECONDS - start)) s"

# ---- sklearn, OpenCV and scikit-image -------------------------------------------------
venv=0
peer=$(bash "$PFC_SOURCE_DIR/tests/support/python_venv.sh" imaging opencv-python-headless \
  scikit-image scikit-learn numpy) || venv=$?
if [ $venv -eq 77 ]; then
  echo "PyPI cannot be reached: sklearn, OpenCV and scikit-image are not compared"
  [ $failures -eq 0 ] || exit 1
  exit 77
fi
[ $venv -eq 0 ] || { fail "python_venv.sh: exit code $venv"; exit 1; }
"$peer" "$here/ijb/sklearn_check.py" "$work/arrays.npz" || fail "sklearn vs the transcription"
sed "s|^|$work/ijb/loose_crop/|" "$work/ijb/meta/ijbc_name_5pts_score.txt" |
  awk '{NF = 11; print}' >"$work/align.txt"
"$align_faces" "$work/align.txt" 112 "$work/aligned" || fail "pfc_align_faces"
"$peer" "$here/ijb/opencv_alignment.py" "$work/align.txt" 112 "$work/aligned" ||
  fail "pfc's alignment is not OpenCV's and scikit-image's"
echo "total $((SECONDS - start)) s"
[ $failures -eq 0 ] || exit 1
echo "ok"
