#!/usr/bin/env bash
# `pfc pack` never destroys a dataset and says what is wrong before it reads an image:
#  - OUT_PREFIX naming a folder (`DIR/`, `''`) or lying under a file, an --image-size that is
#    no whole number (2e19), beyond any integer or too large to decode here (100000): exit 2,
#    nothing written, no folder left behind;
#  - an existing dataset is replaced only with --force, by the complete new one;
#  - SIGINT, SIGTERM, SIGHUP or SIGQUIT during a pack over an existing dataset leaves it as it
#    was, with no temporary behind, and no MPI session folder (pfc-mpi.*) in $TMPDIR.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/face_data_support.sh"
. "$here/check_support.sh"

"$make_faces" "$work/faces" 4 3 || { echo "FAIL: pfc_make_faces"; exit 1; }
"$make_faces" "$work/fewer" 2 3 || { echo "FAIL: pfc_make_faces"; exit 1; }
printf 'text' >"$work/file.txt"
mkdir "$work/empty"
nothing_written() {  # nothing_written CASE: the scratch folder holds only what the test made
  local extra
  extra=$(cd "$work" && find . -mindepth 1 -maxdepth 1 ! -name faces ! -name fewer \
    ! -name file.txt ! -name empty ! -name '*.log' ! -name ds | sort)
  [ -z "$extra" ] || fail "$1 left: $extra"
  [ -z "$(find "$work" -name '*.tmp' -o -name '.rec' -o -name '.idx')" ] ||
    fail "$1 left $(find "$work" -name '*.tmp' -o -name '.rec' -o -name '.idx')"
}

expect_exit 2 prefix_folder "OUT_PREFIX '$work/new/' names no dataset" "DIR/train" -- \
  "$PFC" pack "$work/faces" "$work/new/"
expect_exit 2 prefix_empty "OUT_PREFIX '' names no dataset" -- "$PFC" pack "$work/faces" ''
expect_exit 2 prefix_under_file "'$work/file.txt' is a file, not a folder" -- \
  "$PFC" pack "$work/faces" "$work/file.txt/train"
expect_exit 2 size_huge "--image-size 100000: decoding one 100000x100000 image needs" -- \
  "$PFC" pack "$work/faces" "$work/new/train" --image-size 100000
expect_exit 2 size_float "--image-size '2e19' is not a whole number of pixels" -- \
  "$PFC" pack "$work/faces" "$work/new/train" --image-size 2e19
expect_exit 2 size_overflow "--image-size 20000000000000000000 is beyond any image" -- \
  "$PFC" pack "$work/faces" "$work/new/train" --image-size 20000000000000000000
expect_exit 2 no_images "has no identity folders holding" -- \
  "$PFC" pack "$work/empty" "$work/new/deeper/train"
nothing_written "the refusals"

# A dataset, then the same pack again: refused without --force, the files untouched.
expect_exit 0 first_pack "packed 12 images of 4 identities" -- \
  "$PFC" pack "$work/faces" "$work/ds/train"
sums=$(cd "$work/ds" && sha256sum train.rec train.idx)
expect_exit 2 again "'$work/ds/train.rec' exists: pfc pack replaces a dataset only with --force" \
  -- "$PFC" pack "$work/fewer" "$work/ds/train"
[ "$(cd "$work/ds" && sha256sum train.rec train.idx)" = "$sums" ] ||
  fail "a refused pack changed the dataset"

# Interrupted while packing over it: the dataset stays whole, no temporary is left.
"$make_faces" "$work/many" 40 25 >/dev/null || fail "pfc_make_faces (1000 images)"
mkdir "$work/tmpdir"
for signal in INT TERM HUP QUIT; do
  TMPDIR="$work/tmpdir" "$python" - "$PFC" "$work" "$signal" <<'PY' || fail "SIG$signal: pack"
import os, resource, signal, subprocess, sys, time
pfc, work, name = sys.argv[1:]
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGQUIT's default action dumps core
p = subprocess.Popen([pfc, "pack", f"{work}/many", f"{work}/ds/train", "--force"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 60
temporary = f"{work}/ds/train.rec.tmp"
while not os.path.exists(temporary) and p.poll() is None and time.time() < deadline:
    time.sleep(0.002)
p.send_signal(getattr(signal, "SIG" + name))
rc = p.wait()
sys.exit(0 if rc == -getattr(signal, "SIG" + name) else f"pfc pack ended with {rc}")
PY
  [ "$(cd "$work/ds" && sha256sum train.rec train.idx)" = "$sums" ] ||
    fail "SIG$signal during pfc pack changed the dataset"
  [ -z "$(find "$work/ds" -name '*.tmp')" ] || fail "SIG$signal left $(ls "$work/ds")"
  [ -z "$(ls -A "$work/tmpdir")" ] || fail "SIG$signal left $(ls -A "$work/tmpdir") in \$TMPDIR"
done

# --force: the new dataset, whole, in place of the old one.
expect_exit 0 forced "packed 6 images of 2 identities" -- \
  "$PFC" pack "$work/fewer" "$work/ds/train" --force
[ "$(wc -l <"$work/ds/train.idx")" -eq 9 ] || fail "the forced pack's index is not the new one"
[ -z "$(find "$work/ds" -name '*.tmp')" ] || fail "the forced pack left $(ls "$work/ds")"
[ "$failures" -eq 0 ]
