#!/usr/bin/env bash
# Datasets as they come, and ones that would train on the wrong images, end to end:
#  - an index whose image keys all point at one offset (once: exit 0, one image trained on) is
#    refused at open with exit 1;
#  - an index with two image offsets swapped trains as MXFaceDataset trains it (by key, the
#    label from the record, never its id): nothing skipped;
#  - a dataset rewritten the way arcface_torch's scripts/shuffle_rec.py rewrites one (keys
#    0..N-1, no header record, each record keeping its original id) trains on every image;
#  - an index offset no file can have (2^64 - 8) is exit 1 naming the index, line and key;
#  - a dataset most of whose records are damaged stops the run (exit 1) with the count, never
#    ending "ok" on what is left;
#  - 112x112 images under image_size = 32 are a usage error (exit 2) that says the sizes, not
#    "every record is damaged".
# A refused run writes no metrics.
set -uo pipefail
make_faces="$(cd "${PFC_BINARY_DIR:-.}" && pwd)/bin/pfc_make_faces"
if [ ! -x "$make_faces" ]; then
  echo "skipped: $make_faces is not built"
  exit 77
fi
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
train() {
  mpiexec -n 2 "$PFC" train input/smoke.toml --set num_classes=4 --set num_image=16 \
    --set num_epoch=20 --set checkpoint_every=-1 --set frequent=1 "$@"
}

"$make_faces" "$work/faces" 4 4 32 && "$PFC" pack --image-size 32 "$work/faces" \
  "$work/clean/train" >"$work/pack.log" 2>&1 || { fail "cannot make the dataset"; exit 1; }
# rewrite_index COPY PYTHON: COPY of the clean dataset, its index rewritten line by line by
# PYTHON, an expression of key k, offset o and the {key: offset} table `offsets`.
rewrite_index() {
  cp -r "$work/clean" "$work/$1"
  "$python" - "$work/$1/train.idx" "$2" <<'PY'
import sys
path, rule = sys.argv[1], sys.argv[2]
offsets = {int(k): int(o) for k, o in (line.split("\t") for line in open(path).read().splitlines())}
lines = [f"{k}\t{eval(rule, {'k': k, 'o': o, 'offsets': offsets})}" for k, o in offsets.items()]
open(path, "w").write("\n".join(lines) + "\n")
PY
}
# records.py DATASET ...: reads and writes MXNet RecordIO as mxnet.recordio does (magic,
# length word, the record padded to 4 bytes; IRHeader flag, label, id, id2, then the image).
cat >"$work/records.py" <<'PY'
import random, struct, sys
MAGIC = 0xCED7230A

def read(prefix):
    rec = open(prefix + ".rec", "rb").read()
    out = {}
    for line in open(prefix + ".idx").read().splitlines():
        key, offset = map(int, line.split("\t"))
        magic, word = struct.unpack_from("<II", rec, offset)
        assert magic == MAGIC and word >> 29 == 0, "a split record"
        payload = rec[offset + 8: offset + 8 + (word & (1 << 29) - 1)]
        flag, label, rid, rid2 = struct.unpack_from("<IfQQ", payload)
        labels = struct.unpack_from(f"<{flag}f", payload, 24) if flag else (label,)
        out[key] = (flag, labels, rid, rid2, payload[24 + 4 * flag:])
    return out

def write(prefix, records):
    with open(prefix + ".rec", "wb") as rec, open(prefix + ".idx", "w") as idx:
        for key, payload in records:
            idx.write(f"{key}\t{rec.tell()}\n")
            rec.write(struct.pack("<II", MAGIC, len(payload)) + payload)
            rec.write(b"\0" * (-len(payload) % 4))

def pack(flag, labels, rid, rid2, image):
    if flag:
        labels = struct.pack(f"<{flag}f", *labels)
        return struct.pack("<IfQQ", flag, 0.0, rid, rid2) + labels + image
    return struct.pack("<IfQQ", 0, labels[0], rid, rid2) + image

what, source, target = sys.argv[1:4]
records = read(source)
images = range(1, int(records[0][1][0]))
if what == "shuffle":  # scripts/shuffle_rec.py: images only, new keys, label[0], original id
    order = list(images)
    random.Random(7).shuffle(order)
    write(target, [(k, pack(0, records[o][1][:1], records[o][2], records[o][3], records[o][4]))
                   for k, o in enumerate(order)])
elif what == "damage":  # every image record from key 6 on holds no image format
    write(target, [(k, pack(*r[:4], r[4] if k < 6 or k not in images else b"\x55" * len(r[4])))
                   for k, r in sorted(records.items())])
PY

rewrite_index one_offset "offsets[1] if 1 <= k <= 16 else o"
expect_exit 1 one_offset "keys 1 and 2 (and 14 more) point at the same offset" \
  "does not belong to its .rec file" -- train --set rec=\"$work/one_offset\" \
  --set output=\"$work/one_offset_run\"
[ ! -e "$work/one_offset_run/metrics.h5" ] || fail "the refused run wrote metrics.h5"

rewrite_index swapped "offsets[5] if k == 3 else offsets[3] if k == 5 else o"
expect_exit 0 swapped "Training: " -- \
  train --set rec=\"$work/swapped\" --set output=\"$work/swapped_run\"
grep -q "skipping damaged record" "$work/swapped.log" && fail "swapped: records were skipped"
[ "$(inspect last-skipped "$work/swapped_run")" = 0 ] || fail "swapped: skipped_records is not 0"

mkdir -p "$work/shuffled"
"$python" "$work/records.py" shuffle "$work/clean/train" "$work/shuffled/train" ||
  fail "cannot shuffle the dataset"
expect_exit 0 shuffled "train.rec: 16 images, no header record" "Training: " -- \
  train --set rec=\"$work/shuffled\" --set output=\"$work/shuffled_run\"
grep -q "skipping damaged record" "$work/shuffled.log" && fail "shuffled: records were skipped"
[ "$(inspect last-skipped "$work/shuffled_run")" = 0 ] || fail "shuffled: skipped_records is not 0"

rewrite_index wrapped "18446744073709551608 if k == 2 else o"
expect_exit 1 wrapped "$work/wrapped/train.idx:3: key 2 has offset 18446744073709551608" \
  "beyond any file" -- train --set rec=\"$work/wrapped\" --set output=\"$work/wrapped_run\"
grep -q "Invalid argument" "$work/wrapped.log" && fail "wrapped: pread's error, not the key"

"$make_faces" "$work/faces25" 5 5 32 && "$PFC" pack --image-size 32 "$work/faces25" \
  "$work/clean25/train" >"$work/pack25.log" 2>&1 ||
  { fail "cannot make the 25-image dataset"; exit 1; }
mkdir -p "$work/damaged"
"$python" "$work/records.py" damage "$work/clean25/train" "$work/damaged/train" ||
  fail "cannot damage the dataset"
expect_exit 1 damaged "of its 25 images are damaged, more than a run skips (16" \
  "check that train.idx belongs to train.rec" -- \
  train --set rec=\"$work/damaged\" --set num_classes=5 --set num_image=25 \
  --set output=\"$work/damaged_run\"
status=$(inspect status "$work/damaged_run" | head -n 1)
[ "$status" = failed ] || fail "damaged: status '$status', not failed"

"$make_faces" "$work/faces112" 4 4 112 && "$PFC" pack "$work/faces112" "$work/big/train" \
  >"$work/pack112.log" 2>&1 || { fail "cannot make the 112x112 dataset"; exit 1; }
expect_exit 2 image_size "holds 112x112 images (key 1), but image_size = 32; set image_size = 112" \
  -- train --set rec=\"$work/big\" --set output=\"$work/big_run\"
[ ! -e "$work/big_run/metrics.h5" ] || fail "the refused run wrote metrics.h5"
[ "$failures" -eq 0 ]
