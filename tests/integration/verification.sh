#!/usr/bin/env bash
# Verification end to end on the CPU with a tiny network: faces from pfc_make_faces packed
# with `pfc pack`, a pairs .bin written by python3's pickle in both protocols
# (learning/write_verification_bin.py), then
#  - `pfc train` on 2 ranks with val_targets and verbose: arcface_torch's log lines at every
#    `verbose` step and after the last, metrics.h5 /verification/<name>/*;
#  - `pfc verify` on the run (1 and 2 ranks): the numbers the run logged at its last step;
#  - `pfc embed` of the .bin, the dataset folder and the image files (and on 2 and 3 ranks,
#    which give the same file): the datasets, the same
#    embeddings for the same images however they are given, the logged XNorm, and the
#    accuracy of verification.py's protocol in numpy (learning/verification_accuracy.py);
#  - `pfc report`: the accuracy table, its CSV, and accuracy.png (with matplotlib);
#  - files as Python 3 writes them at protocol 2 (bytes as _codecs.encode calls) and of
#    250x250 images (resized as load_bin resizes them) verify;
#  - bad input: a missing target or one of too few pairs stops `pfc train` at start-up without
#    touching metrics.h5; a pickle that names code, a truncated file, an odd image count, too
#    few pairs, an image that does not decode, and a folder that is not a run are messages and
#    exit code 2, before any file is verified;
#  - a verification that fails during training (one rank, PFC_FAULT at:verification) loses no
#    training: the checkpoint of its step was written first, and the run continues from it.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/face_data_support.sh"
. "$here/check_support.sh"
learning="$PFC_SOURCE_DIR/tests/integration/learning"

identities=10 per_identity=4
"$make_faces" "$work/faces" $identities $per_identity 112 ||
  { echo "FAIL: pfc_make_faces"; exit 1; }
"$PFC" pack "$work/faces" "$work/data/train" >"$work/pack.log" 2>&1 ||
  { echo "FAIL: pfc pack"; cat "$work/pack.log"; exit 1; }
# 20 pairs: every fold of 2 pairs holds a same and a different one, which VAL needs.
"$python" "$learning/write_verification_bin.py" "$work/faces" 20 5 "$work/data/pairs.bin" \
  "$work/data/pairs3.bin" >/dev/null || { echo "FAIL: write_verification_bin.py"; exit 1; }
# The .bin's images as files, in its order, to embed them as files too.
"$python" - "$work" <<'PY' || { echo "FAIL: cannot unpack the .bin"; exit 1; }
import os, pickle, sys
bins, issame = pickle.load(open(f"{sys.argv[1]}/data/pairs3.bin", "rb"))
os.makedirs(f"{sys.argv[1]}/frombin")
for i, image in enumerate(bins):
    open(f"{sys.argv[1]}/frombin/{i:03d}.jpg", "wb").write(image)
PY

run="$work/run"
train_args=(--set network=\"custom\" --set image_size=112 --set widths=[8,8,16,16]
            --set embedding_size=16 --set rec=\"$work/data\" --set num_classes=$identities
            --set num_image=$((identities * per_identity)) --set batch_size=4 --set steps=6
            --set num_epoch=2 --set frequent=2 --set checkpoint_every=0 --set verbose=4)
timeout 300 mpiexec -n 2 "$PFC" train input/smoke.toml "${train_args[@]}" \
  --set 'val_targets=["pairs", "pairs3"]' --set output=\"$run\" >"$work/train.log" 2>&1 ||
  { echo "FAIL: pfc train with val_targets"; cat "$work/train.log"; exit 1; }
for name in pairs pairs3; do
  for step in 4 6; do  # every verbose = 4 steps, and after the last (6)
    grep -qE "^\[$name\]\[$step\]XNorm: [0-9]+\.[0-9]{6}\$" "$work/train.log" ||
      fail "no [$name][$step]XNorm line"
    grep -qE "^\[$name\]\[$step\]Accuracy-Flip: [01]\.[0-9]{5}\+-[0-9]\.[0-9]{5}\$" \
      "$work/train.log" || fail "no [$name][$step]Accuracy-Flip line"
    grep -qE "^\[$name\]\[$step\]Accuracy-Highest: [01]\.[0-9]{5}\$" "$work/train.log" ||
      fail "no [$name][$step]Accuracy-Highest line"
  done
done
[ "$(grep -c 'XNorm' "$work/train.log")" -eq 4 ] || fail "not 4 XNorm lines (2 targets x 2)"
# Both protocols hold the same images: the same figures.
[ "$(grep '^\[pairs\]\[6\]' "$work/train.log" | cut -d']' -f3-)" = \
  "$(grep '^\[pairs3\]\[6\]' "$work/train.log" | cut -d']' -f3-)" ] ||
  fail "the two protocols' files gave different figures"
"$python" - "$run/metrics.h5" <<'PY' || fail "metrics.h5 /verification"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
for name in ("pairs", "pairs3"):
    g = f["verification"][name]
    assert list(g["step"][:]) == [4, 6], list(g["step"][:])
    for column in ("accuracy", "accuracy_std", "accuracy_noflip", "xnorm", "val_at_far"):
        assert g[column].shape == (2,), (column, g[column].shape)
    assert 0 <= g["accuracy"][1] <= 1 and g["xnorm"][1] > 0
PY

# pfc verify on the run's last checkpoint: the figures of step 6, on 1 rank and on 2.
"$PFC" verify "$run" "$work/data/pairs.bin" "$work/data/pairs3.bin" >"$work/verify1.log" 2>&1 ||
  { fail "pfc verify: exit code $?"; cat "$work/verify1.log"; }
timeout 120 mpiexec -n 2 "$PFC" verify "$run" "$work/data/pairs.bin" >"$work/verify2.log" 2>&1 ||
  { fail "pfc verify on 2 ranks: exit code $?"; cat "$work/verify2.log"; }
for what in XNorm Accuracy-Flip; do
  logged=$(grep "^\[pairs\]\[6\]$what: " "$work/train.log" | cut -d' ' -f2)
  alone=$(grep "^\[pairs\]$what: " "$work/verify1.log" | cut -d' ' -f2)
  shared=$(grep "^\[pairs\]$what: " "$work/verify2.log" | cut -d' ' -f2)
  [ -n "$alone" ] && [ "$alone" = "$logged" ] ||
    fail "pfc verify $what '$alone', the run logged '$logged' at step 6"
  [ "$shared" = "$alone" ] || fail "pfc verify $what on 2 ranks '$shared', on 1 '$alone'"
done
for line in "Accuracy: [01]\.[0-9]{5}\+-" "VAL@FAR=1e-3: [01]\.[0-9]{5}\+-[0-9.]+ \(FAR [0-9.]+\)" \
            "Pairs: 20 \(40 images, 10 folds\)"; do
  grep -qE "^\[pairs3\]$line" "$work/verify1.log" || fail "pfc verify: no '[pairs3]$line' line"
done
cat "$work/verify1.log"

# pfc embed: the .bin, the dataset folder, and the pairs' image files in the file's order.
"$PFC" embed "$run" "$work/data/pairs.bin" --output "$work/bin.h5" --flip >"$work/embed.log" 2>&1 ||
  { fail "pfc embed .bin: exit code $?"; cat "$work/embed.log"; }
"$PFC" embed "$run" "$work/data" --output "$work/rec.h5" >>"$work/embed.log" 2>&1 ||
  { fail "pfc embed dataset: exit code $?"; cat "$work/embed.log"; }
"$PFC" embed "$run" "$work/frombin" --batch-size 5 \
  --output "$work/files.h5" >>"$work/embed.log" 2>&1 ||
  { fail "pfc embed files: exit code $?"; cat "$work/embed.log"; }
# Under mpiexec the ranks share the batches and rank 0 writes the same file.
mpiexec -n 3 "$PFC" embed "$run" "$work/data" --batch-size 7 --output "$work/rec3.h5" \
  >>"$work/embed.log" 2>&1 || { fail "pfc embed dataset on 3 ranks: exit code $?"; cat "$work/embed.log"; }
mpiexec -n 2 "$PFC" embed "$run" "$work/data/pairs.bin" --flip --output "$work/bin2.h5" \
  >>"$work/embed.log" 2>&1 || { fail "pfc embed .bin on 2 ranks: exit code $?"; cat "$work/embed.log"; }
xnorm=$(grep '^\[pairs\]\[6\]XNorm: ' "$work/train.log" | cut -d' ' -f2)
"$python" - "$work" "$xnorm" $((identities * per_identity)) <<'PY' || fail "pfc embed's files"
import sys, h5py, numpy as np
work, xnorm, images = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
b, r, f = (h5py.File(f"{work}/{n}.h5", "r") for n in ("bin", "rec", "files"))
assert b["embeddings"].shape == (40, 16) and b["embeddings_flip"].shape == (40, 16)
assert b["embeddings"].dtype == np.float32 and list(b["issame"][:2]) == [1, 0]
assert r["embeddings"].shape == (images, 16) and "embeddings_flip" not in r
assert sorted(r["keys"][:]) == list(range(1, images + 1)), r["keys"][:]
assert sorted(set(r["labels"][:])) == list(range(10)), r["labels"][:]
first = f["names"][0]
first = first.decode() if isinstance(first, bytes) else first
assert f["names"].shape == (40,) and first.endswith("frombin/000.jpg"), first
# The same JPEGs give the same embeddings, in a .bin or as files, in batches of 64 or 5.
assert np.abs(f["embeddings"][:] - b["embeddings"][:]).max() < 1e-5
norms = np.linalg.norm(np.concatenate([b["embeddings"][:], b["embeddings_flip"][:]]), axis=1)
assert abs(norms.mean() - xnorm) < 1e-5 * xnorm, (norms.mean(), xnorm)
assert b.attrs["step"] == 6 and b.attrs["flip"] == 1
# On 2 and 3 ranks: the same rows in the same order (keys, labels, pairs), the same values.
r3, b2 = h5py.File(f"{work}/rec3.h5", "r"), h5py.File(f"{work}/bin2.h5", "r")
for name in ("keys", "labels"):
    assert list(r3[name][:]) == list(r[name][:]), name
assert np.abs(r3["embeddings"][:] - r["embeddings"][:]).max() < 1e-5
for name in ("embeddings", "embeddings_flip", "issame"):
    assert np.array_equal(b2[name][:], b[name][:]), name
PY
grep -q "embedded 40 of 40 images" "$work/embed.log" || fail "pfc embed: no progress line"
# verification.py's protocol in numpy on pfc embed's embeddings gives pfc verify's figures.
"$python" - "$work" <<'PY' || fail "cannot write the raw embeddings"
import sys, h5py
w = sys.argv[1]
f = h5py.File(f"{w}/bin.h5", "r")
f["embeddings"][:].tofile(f"{w}/emb.f32")
f["embeddings_flip"][:].tofile(f"{w}/flip.f32")
open(f"{w}/issame.txt", "w").write("".join(str(int(x)) for x in f["issame"][:]))
PY
read -r flip std noflip < <("$python" "$learning/verification_accuracy.py" "$work/emb.f32" \
  "$work/flip.f32" "$(cat "$work/issame.txt")" 16) || fail "verification_accuracy.py"
grep -qF "[pairs]Accuracy-Flip: $flip+-$std" "$work/verify1.log" ||
  fail "numpy: Accuracy-Flip $flip+-$std; pfc verify: $(grep Flip "$work/verify1.log")"
grep -qF "[pairs]Accuracy: $noflip+-" "$work/verify1.log" ||
  fail "numpy: Accuracy $noflip; pfc verify: $(grep 'Accuracy:' "$work/verify1.log")"

# Python 3's own pickle at protocol 2 (bytes as _codecs.encode(text, 'latin1') calls): the same
# images, the same figures.
"$python" - "$work" <<'PY' || fail "cannot write the protocol 2 file"
import pickle, sys
bins, issame = pickle.load(open(f"{sys.argv[1]}/data/pairs3.bin", "rb"))
pickle.dump((bins, issame), open(f"{sys.argv[1]}/data/py3p2.bin", "wb"), protocol=2)
assert b"_codecs" in open(f"{sys.argv[1]}/data/py3p2.bin", "rb").read()
PY
"$PFC" verify "$run" "$work/data/py3p2.bin" >"$work/py3p2.log" 2>&1 ||
  { fail "pfc verify of a protocol 2 file: exit code $?"; cat "$work/py3p2.log"; }
[ "$(grep '^\[py3p2\]Accuracy-Flip' "$work/py3p2.log" | cut -d' ' -f2)" = \
  "$(grep '^\[pairs3\]Accuracy-Flip' "$work/verify1.log" | cut -d' ' -f2)" ] ||
  fail "the protocol 2 file's figures differ: $(cat "$work/py3p2.log")"
# LFW's own images are 250x250: resized to the network's 112 as load_bin does.
"$make_faces" "$work/faces250" 4 3 250 >/dev/null &&
  "$python" "$learning/write_verification_bin.py" "$work/faces250" 10 3 "$work/data/big2.bin" \
    "$work/data/big250.bin" >/dev/null || fail "cannot write the 250x250 file"
"$PFC" verify "$run" "$work/data/big250.bin" >"$work/big250.log" 2>&1 ||
  { fail "pfc verify of 250x250 images: exit code $?"; cat "$work/big250.log"; }
grep -q "^\[big250\]Accuracy-Flip: " "$work/big250.log" || fail "no figures for 250x250 images"

# A verification that fails on one rank during training: the checkpoint of its step is on
# disk, and resume = "auto" continues from it.
PFC_FAULT=rank:1,step:4,at:verification timeout 300 mpiexec -n 2 "$PFC" train \
  input/smoke.toml "${train_args[@]}" --set 'val_targets=["pairs"]' \
  --set output=\"$work/fault_run\" >"$work/fault_run.log" 2>&1
code=$?
[ $code -ne 0 ] || fail "the failed verification: exit code 0"
grep -q "injected fault on rank 1 at the verification of step 4" "$work/fault_run.log" ||
  fail "the failed verification: $(tail -5 "$work/fault_run.log")"
[ -f "$work/fault_run/ckpt/step_0000004/model.h5" ] ||
  fail "the failed verification lost the training of its step: no ckpt/step_0000004"
timeout 300 mpiexec -n 2 "$PFC" train input/smoke.toml "${train_args[@]}" \
  --set 'val_targets=["pairs"]' --set output=\"$work/fault_run\" --set resume=\"auto\" \
  >"$work/fault_resume.log" 2>&1 || fail "resume after the failed verification: exit code $?"
grep -q "resumed from .*step_0000004 at step 4" "$work/fault_resume.log" ||
  fail "resume after the failed verification: $(grep -i resum "$work/fault_resume.log")"
grep -q "^\[pairs\]\[6\]Accuracy-Flip" "$work/fault_resume.log" ||
  fail "resume after the failed verification: no verification at step 6"

# pfc report: the verification table, its CSV, the plot.
"$PFC" report "$run" --verification-csv "$work/verification.csv" >"$work/report.md" 2>&1 ||
  { fail "pfc report: exit code $?"; cat "$work/report.md"; }
grep -q "^## Verification" "$work/report.md" || fail "pfc report: no verification table"
grep -qE "^\| 6 \| [01]\.[0-9]{5} ± [0-9.]+ \| [01]\.[0-9]{5} ± [0-9.]+ \|$" "$work/report.md" ||
  fail "pfc report: no row for step 6: $(cat "$work/report.md")"
[ "$(wc -l <"$work/verification.csv")" -eq 5 ] || fail "verification CSV: not 4 rows"
if "$python" -c 'import matplotlib' 2>/dev/null; then
  "$python" jobs/plot_report.py --verification "$work/verification.csv" --out "$work/plots" \
    >/dev/null || fail "plot_report.py --verification"
  [ -s "$work/plots/accuracy.png" ] || fail "no accuracy.png"
fi

# A missing target stops the run before it writes anything; an earlier metrics.h5 is kept.
before=$(md5sum <"$run/metrics.h5")
timeout 120 "$PFC" train input/smoke.toml "${train_args[@]}" --set 'val_targets=["lfw"]' \
  --set resume=true --set steps=8 --set output=\"$run\" >"$work/missing.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "missing target: exit code $code, expected 2"
grep -q "verification file '$work/data/lfw.bin' does not exist" "$work/missing.log" ||
  fail "missing target: message: $(cat "$work/missing.log")"
grep -q "^Training: " "$work/missing.log" && fail "missing target: it trained"
[ "$(md5sum <"$run/metrics.h5")" = "$before" ] || fail "missing target: metrics.h5 changed"

# Bad files: a message naming the file and the item, exit code 2, nothing run.
bad() {  # bad NAME EXPECTED-TEXT: pfc verify on $work/bad/NAME.bin
  "$PFC" verify "$run" "$work/bad/$1.bin" >"$work/bad/$1.log" 2>&1
  local code=$?
  [ $code -eq 2 ] || fail "$1: exit code $code, expected 2"
  grep -q "$work/bad/$1.bin" "$work/bad/$1.log" || fail "$1: the file is not named"
  grep -q "$2" "$work/bad/$1.log" || fail "$1: no '$2' in: $(cat "$work/bad/$1.log")"
}
mkdir -p "$work/bad"
"$python" - "$work" <<'PY'
import os, pickle, sys
work = sys.argv[1]
class Run:
    def __reduce__(self):
        return (os.system, (f"touch {work}/bad/executed",))
open(f"{work}/bad/code.bin", "wb").write(pickle.dumps((Run(), [True]), protocol=2))
whole = open(f"{work}/data/pairs3.bin", "rb").read()
open(f"{work}/bad/truncated.bin", "wb").write(whole[: len(whole) // 2])
jpeg = open(f"{work}/faces/id_000/img_00.jpg", "rb").read()
open(f"{work}/bad/odd.bin", "wb").write(pickle.dumps(([jpeg] * 3, [True]), protocol=4))
open(f"{work}/bad/undecodable.bin", "wb").write(
    pickle.dumps(([jpeg] * 19 + [b"not a jpeg"], [True] * 10), protocol=4))
open(f"{work}/bad/few.bin", "wb").write(pickle.dumps(([jpeg] * 6, [True] * 3), protocol=2))
open(f"{work}/bad/numpy.bin", "wb").write(b"\x80\x02cnumpy.core.multiarray\n_reconstruct\n.")
PY
bad code "GLOBAL ('c')"
[ -e "$work/bad/executed" ] && fail "code.bin: the pickle's code ran"
bad truncated "truncated"
bad odd "odd number of images (3)"
bad undecodable "image 19 of 20 does not decode"
bad few "it holds 3 pairs; arcface_torch's protocol scores 10 folds"
# Every file is checked before the first is verified.
"$PFC" verify "$run" "$work/data/pairs.bin" "$work/bad/undecodable.bin" >"$work/both.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "verify good.bin bad.bin: exit code $code, expected 2"
grep -q "undecodable.bin': image 19 of 20 does not decode" "$work/both.log" ||
  fail "verify good.bin bad.bin: $(cat "$work/both.log")"
grep -q "^\[pairs\]" "$work/both.log" && fail "verify good.bin bad.bin: good.bin was verified first"
# A target of too few pairs stops training at start-up.
cp "$work/bad/few.bin" "$work/data/few.bin"
timeout 120 "$PFC" train input/smoke.toml "${train_args[@]}" --set 'val_targets=["few"]' \
  --set output=\"$work/few_run\" >"$work/few_run.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "few-pairs target: exit code $code, expected 2"
grep -q "few.bin': it holds 3 pairs" "$work/few_run.log" ||
  fail "few-pairs target: $(cat "$work/few_run.log")"
grep -q "^Training: " "$work/few_run.log" && fail "few-pairs target: it trained"
[ -e "$work/few_run/metrics.h5" ] && fail "few-pairs target: it wrote metrics.h5"
bad numpy "import or call code"
"$PFC" verify "$work/faces" "$work/data/pairs.bin" >"$work/notrun.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "verify of a folder that is not a run: exit code $code"
"$PFC" embed "$run" "$work/data/pairs.bin" "$work/faces" --output "$work/x.h5" \
  >"$work/mixed.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "embed of a .bin with other inputs: exit code $code"
[ -e "$work/x.h5" ] && fail "a refused embed wrote its output"

[ $failures -eq 0 ] || exit 1
echo "ok"
