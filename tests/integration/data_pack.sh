#!/usr/bin/env bash
# `pfc pack` end to end: a folder of identity folders of face JPEGs (made by pfc_make_faces)
# becomes train.rec/train.idx in insightface's layout, and bad input is refused with exit 2.
set -uo pipefail

make_faces="${PFC_BINARY_DIR:-.}/bin/pfc_make_faces"
if [ -z "${PFC:-}" ] || [ ! -x "$PFC" ] || [ ! -x "$make_faces" ]; then
  echo "skipped: ${PFC:-\$PFC} or $make_faces is not built"
  exit 77
fi

. "$(dirname "${BASH_SOURCE[0]}")/check_support.sh"

"$make_faces" "$work/faces" 4 3 || { echo "FAIL: pfc_make_faces"; exit 1; }
printf 'not an image' >"$work/faces/id_001/notes.txt"
printf 'broken' >"$work/faces/id_002/broken.jpg"

if ! "$PFC" pack "$work/faces" "$work/dataset/train" >"$work/pack.out" 2>"$work/pack.err"; then
  fail "pfc pack exited $?"
  cat "$work/pack.out" "$work/pack.err"
fi
grep -qF 'packed 12 images of 4 identities' "$work/pack.out" || fail "summary: $(cat "$work/pack.out")"
grep -qF "rec = \"$work/dataset\"  num_classes = 4  num_image = 12" "$work/pack.out" ||
  fail "no config hint in: $(cat "$work/pack.out")"
grep -qF "leaving out $work/faces/id_002/broken.jpg" "$work/pack.err" ||
  fail "no warning for the broken JPEG in: $(cat "$work/pack.err")"
[ -s "$work/dataset/train.rec" ] || fail "train.rec missing or empty"

# The index: header, 12 images, 4 identity records; key TAB offset, offsets 4-byte aligned.
idx="$work/dataset/train.idx"
[ "$(wc -l <"$idx")" -eq 17 ] || fail "train.idx has $(wc -l <"$idx") lines, expected 17"
[ "$(head -n 1 "$idx")" = "$(printf '0\t0')" ] || fail "first index line is '$(head -n 1 "$idx")'"
awk -F'\t' 'NR != $1 + 1 || $2 % 4 != 0 { bad = 1 } END { exit bad }' "$idx" ||
  fail "index keys are not 0..16 in order with aligned offsets"
# Record 0 starts with the RecordIO magic 0xced7230a (little-endian).
magic=$(od -An -tx4 -N4 "$work/dataset/train.rec" | tr -d ' ')
[ "$magic" = "ced7230a" ] || fail "train.rec starts with $magic"

# Read it back the way mxnet.recordio does (struct "IfQQ" headers, parts joined by the
# magic), as an independent check of the format.
if command -v python3 >/dev/null; then
  python3 - "$work/dataset/train" <<'PY' || fail "python reader disagrees with the layout"
import struct, sys
prefix = sys.argv[1]
MAGIC = 0xced7230a
idx = {int(k): int(v) for k, v in (l.split("\t") for l in open(prefix + ".idx").read().split("\n") if l)}
rec = open(prefix + ".rec", "rb").read()
def read(offset):
    out = b""
    while True:
        magic, lrec = struct.unpack_from("<II", rec, offset)
        assert magic == MAGIC, hex(magic)
        flag, length = lrec >> 29, lrec & ((1 << 29) - 1)
        out += rec[offset + 8: offset + 8 + length]
        offset += 8 + (length + 3) // 4 * 4
        if flag in (0, 3):
            return out
        out += struct.pack("<I", MAGIC)
def unpack(s):
    flag, label, id1, id2 = struct.unpack("IfQQ", s[:24])
    s = s[24:]
    if flag > 0:
        label = list(struct.unpack("%df" % flag, s[:4 * flag]))
        s = s[4 * flag:]
    return flag, label, id1, s
flag, label, _, img = unpack(read(idx[0]))
assert flag == 2 and label == [13.0, 17.0] and img == b"", (flag, label)
for key in range(1, 13):
    flag, label, id1, img = unpack(read(idx[key]))
    assert flag == 0 and label == (key - 1) // 3 and id1 == key and img[:2] == b"\xff\xd8", key
for c in range(4):
    flag, label, _, img = unpack(read(idx[13 + c]))
    assert flag == 2 and label == [1 + 3 * c, 4 + 3 * c] and img == b"", (c, label)
PY
fi

expect_usage() {
  local name=$1 pattern=$2
  shift 2
  "$PFC" pack "$@" >"$work/$name.out" 2>"$work/$name.err"
  local code=$?
  [ $code -eq 2 ] || fail "$name: exit code $code, expected 2"
  grep -qF "$pattern" "$work/$name.err" || fail "$name: '$pattern' not in: $(cat "$work/$name.err")"
}
expect_usage missing_dir 'is not a folder' "$work/nowhere" "$work/out/train"
mkdir -p "$work/empty"
expect_usage empty_dir 'has no identity folders' "$work/empty" "$work/out/train"
expect_usage wrong_size 'has no identity folders holding 96x96' "$work/faces" "$work/out/train" \
  --image-size 96

[ $failures -eq 0 ] || exit 1
echo "ok"
