#!/usr/bin/env bash
# Datasets that would train on the wrong images, refused or counted: an index whose image keys
# all point at one offset (once: exit 0, one image trained on) is refused at open with exit 1;
# an index with two image offsets swapped leads to records that carry other keys' ids, which
# are counted in skipped_records and warned about by key; 112x112 images under
# image_size = 32 are a usage error (exit 2) that says the sizes, not "every record is
# damaged". A refused run writes no metrics.
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

rewrite_index one_offset "offsets[1] if 1 <= k <= 16 else o"
expect_exit 1 one_offset "keys 1 and 2 (and 14 more) point at the same offset" \
  "does not belong to its .rec file" -- train --set rec=\"$work/one_offset\" \
  --set output=\"$work/one_offset_run\"
[ ! -e "$work/one_offset_run/metrics.h5" ] || fail "the refused run wrote metrics.h5"

rewrite_index swapped "offsets[5] if k == 3 else offsets[3] if k == 5 else o"
expect_exit 0 swapped "carries id 5, but key 3 points there" \
  "carries id 3, but key 5 points there" -- \
  train --set rec=\"$work/swapped\" --set output=\"$work/swapped_run\"
skipped=$(inspect last-skipped "$work/swapped_run")
# Each rank counts each damaged record it meets once; both records are met by one rank at
# least.
{ [ "$skipped" -ge 2 ] && [ "$skipped" -le 4 ]; } || fail "skipped_records is $skipped, not 2..4"

"$make_faces" "$work/faces112" 4 4 112 && "$PFC" pack "$work/faces112" "$work/big/train" \
  >"$work/pack112.log" 2>&1 || { fail "cannot make the 112x112 dataset"; exit 1; }
expect_exit 2 image_size "holds 112x112 images (key 1), but image_size = 32; set image_size = 112" \
  -- train --set rec=\"$work/big\" --set output=\"$work/big_run\"
[ ! -e "$work/big_run/metrics.h5" ] || fail "the refused run wrote metrics.h5"
[ "$failures" -eq 0 ]
