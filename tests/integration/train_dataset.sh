#!/usr/bin/env bash
# `pfc train` on a real RecordIO dataset end to end: pfc_make_faces draws 6 identities x 8 face
# JPEGs, `pfc pack` packs them, and 2 ranks train 20 steps on it, once clean and once with one
# image record whose JPEG is overwritten (record framing intact). Both runs must finish and log
# every step; metrics.h5 /steps/skipped_records must be 0 for the clean data and, for the damaged
# data, the number of ranks that met the damaged record: each rank remembers a damaged record
# and counts it once however often its epochs bring it back, and the trainer sums the ranks.
# Which ranks meet it is computed here from the sampler's rule (data/distributed_sampler.h), and
# the record is chosen so that both ranks meet it well before the last step, one of them more
# than once. Also: num_classes disagreeing with the header and a missing train.idx are refused
# before training.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/face_data_support.sh"
. "$here/check_support.sh"

identities=6 per_identity=8 images=48 steps=20 seed=2048 batch=8 ranks=2
"$make_faces" "$work/faces" $identities $per_identity 112 ||
  { echo "FAIL: pfc_make_faces"; exit 1; }
"$PFC" pack "$work/faces" "$work/clean/train" >"$work/pack.log" 2>&1 ||
  { echo "FAIL: pfc pack"; cat "$work/pack.log"; exit 1; }
cp -r "$work/clean" "$work/damaged"

# Pick the record to damage and overwrite the start of its JPEG (SOI and the first headers:
# no decoder can read it) without changing any length; prints "KEY RANKS_MEETING_IT".
picked=$("$python" - "$work/damaged/train" $images $batch $ranks $seed $steps <<'PY'
import struct, sys
prefix, n, batch, ranks, seed, steps = sys.argv[1], *map(int, sys.argv[2:])
M = (1 << 64) - 1
def splitmix64(z):
    z = (z + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
def fnv1a64(text):
    h = 0xCBF29CE484222325
    for c in text.encode():
        h = ((h ^ c) * 0x100000001B3) & M
    return h
def stream_key(seed, purpose, step):
    k = fnv1a64(purpose) ^ ((seed * 0xD1B54A32D192ED03) & M)
    k = splitmix64(k ^ ((step * 0x9E3779B97F4A7C15) & M))
    return splitmix64(k)  # rank 0
def epoch_order(epoch):  # distributed_sampler.cpp: Fisher-Yates on uniform53
    order = list(range(n))
    key = stream_key(seed, "data_order", epoch)
    for i in range(n - 1, 0, -1):
        j = int((splitmix64((key + i) & M) >> 11) * (1.0 / 9007199254740992.0) * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order
per_epoch = n // (batch * ranks)
def meetings(last_batch):
    """sample -> the ranks that read it in global batches 0..last_batch."""
    met = {}
    for k in range(last_batch + 1):
        epoch, offset = divmod(k, per_epoch)
        order = epoch_order(epoch)
        for r in range(ranks):
            start = offset * batch * ranks + r * batch
            for s in order[start:start + batch]:
                met.setdefault(s, []).append(r)
    return met
# Every rank meets it in batches 0..steps-1, which the last logged step has surely read, so
# batches read ahead of it cannot change the count; a rank meeting it again shows that a record
# is counted once.
early = meetings(steps - 1)
chosen = [s for s in range(n)
          if set(early.get(s, [])) == set(range(ranks)) and len(early[s]) > ranks]
assert chosen, "no sample is met by every rank early enough; change the seed"
sample = chosen[0]

index = {}
for line in open(prefix + ".idx"):
    if line.strip():
        key, offset = line.split("\t")
        index[int(key)] = int(offset)
key = sample + 1  # key 0 is the header record; the images follow in key order
rec = bytearray(open(prefix + ".rec", "rb").read())
offset = index[key]
magic, lrec = struct.unpack_from("<II", rec, offset)
assert magic == 0xCED7230A and lrec >> 29 == 0, (hex(magic), lrec >> 29)
flag, label, id1, _ = struct.unpack_from("<IfQQ", rec, offset + 8)
assert flag == 0 and id1 == key, (flag, id1, key)
jpeg = offset + 8 + 24
assert rec[jpeg:jpeg + 2] == b"\xff\xd8", rec[jpeg:jpeg + 2]
size = len(rec)
rec[jpeg:jpeg + 64] = b"\x00" * 64
assert len(rec) == size
open(prefix + ".rec", "wb").write(rec)
print(key, len(set(early[sample])))
PY
) || { echo "FAIL: could not damage a record"; exit 1; }
read -r damaged_key expected_skips <<<"$picked"
echo "damaged record: key $damaged_key; ranks that meet it: $expected_skips"
cmp -s "$work/clean/train.idx" "$work/damaged/train.idx" || fail "the index changed"
[ "$(stat -c %s "$work/clean/train.rec")" = "$(stat -c %s "$work/damaged/train.rec")" ] ||
  fail "the record file changed size"

common=(--set num_classes=$identities --set num_image=$images --set image_size=112
        --set batch_size=$batch --set seed=$seed --set steps=$steps --set num_epoch=7
        --set frequent=1 --set checkpoint_every=-1)
train() {  # train NAME DATASET [--set ...]: 2 ranks; log in $work/NAME.log
  local name=$1 data=$2
  shift 2
  timeout 120 mpiexec -n $ranks "$PFC" train input/smoke.toml "${common[@]}" \
    --set rec=\"$data\" --set output=\"$work/out-$name\" "$@" >"$work/$name.log" 2>&1
}

# skipped_records of every logged row, space-separated.
skipped_rows() {
  "$python" -c 'import h5py, sys; print(*h5py.File(sys.argv[1], "r")["steps/skipped_records"][:])' \
    "$work/out-$1/metrics.h5"
}

for name in clean damaged; do
  start=$SECONDS
  train $name "$work/$name" || { fail "$name: exit code $?"; cat "$work/$name.log"; continue; }
  # Every step logged in the seed's format (then the hours left); 3 steps per epoch (48 images,
  # global batch 16).
  for step in $(seq $steps); do
    line="^Training: Speed [0-9]+\.[0-9]{2} samples/sec   Loss [0-9]+\.[0-9]{4}   "
    line+="LearningRate [0-9]+\.[0-9]{6}   Epoch: $(((step - 1) / 3))   Global Step: $step   "
    line+="Required: [0-9]+ hours\$"
    grep -qE "$line" "$work/$name.log" || fail "$name: no log line for step $step"
  done
  [ "$(grep -c '^Training: ' "$work/$name.log")" -eq $steps ] || fail "$name: not $steps log lines"
  rows=$(skipped_rows $name) || { fail "$name: cannot read metrics.h5"; continue; }
  echo "$name: $((SECONDS - start)) s; skipped_records per step: $rows"
  [ "$(wc -w <<<"$rows")" -eq $steps ] || fail "$name: metrics.h5 holds not $steps rows"
  expected=0
  [ $name = damaged ] && expected=$expected_skips
  [ "${rows##* }" = "$expected" ] ||
    fail "$name: skipped_records ends at ${rows##* }, expected $expected"
  sort -n -C <(tr ' ' '\n' <<<"$rows") || fail "$name: skipped_records decreases: $rows"
done
# Each rank warned once about the damaged record, naming its key; the clean run warned never.
grep -q "skipping damaged record" "$work/clean.log" && fail "clean: a record was skipped"
for rank in $(seq 0 $((ranks - 1))); do
  count=$(grep -c "rank $rank\] warning: skipping damaged record: key $damaged_key of " \
    "$work/damaged.log")
  [ "$count" -eq 1 ] || fail "damaged: rank $rank warned $count times about key $damaged_key"
done
[ "$(grep -c "skipping damaged record" "$work/damaged.log")" -eq "$expected_skips" ] ||
  fail "damaged: warnings other than one per rank for key $damaged_key"

# A num_classes that disagrees with the header is a usage error naming num_classes.
train wrong_classes "$work/clean" --set num_classes=7
code=$?
[ $code -eq 2 ] || fail "num_classes = 7: exit code $code, expected 2"
grep -q "num_classes = 7 but the header of .* announces 6 identities" "$work/wrong_classes.log" ||
  fail "num_classes = 7: message: $(cat "$work/wrong_classes.log")"
grep -q "^Training: " "$work/wrong_classes.log" && fail "num_classes = 7: it trained"

# Without train.idx the run stops before training and says which file is missing.
rm "$work/clean/train.idx"
train no_index "$work/clean"
code=$?
[ $code -ne 0 ] || fail "missing train.idx: exit code 0"
grep -q "train.idx" "$work/no_index.log" ||
  fail "missing train.idx: message: $(cat "$work/no_index.log")"
grep -q "^Training: " "$work/no_index.log" && fail "missing train.idx: it trained"
echo "missing train.idx: exit code $code; $(grep -m1 'train.idx' "$work/no_index.log")"

[ $failures -eq 0 ] || exit 1
echo "ok"
