#!/usr/bin/env bash
# A full disk and a read-only file system, on real (namespaced) mounts. A checkpoint whose
# tensors exceed the free space is refused before it is written (exit 1, the figures in the
# message and in metrics.h5's summary); space running out while one is written all the same
# stops the run with exit 1 and "No space left on device". Either way no half-written folder,
# latest.tmp or folder that looks complete is left, `latest` names a checkpoint identical to
# the uninterrupted run's, and once there is space again the run resumes from it and ends
# bit-identically. A resume on
# a read-only file system says so (exit 1) and changes nothing. Needs user and mount
# namespaces (unshare -rm); skipped without them.
set -uo pipefail
if [ "${1:-}" != --in-namespace ]; then
  probe=$(mktemp -d)
  if ! unshare -rm mount -t tmpfs -o size=64k tmpfs "$probe" 2>/dev/null; then
    rmdir "$probe"
    echo "skipped: cannot mount a tmpfs in a user namespace (unshare -rm)"
    exit 77
  fi
  rmdir "$probe"
  exec unshare -rm bash "$0" --in-namespace
fi
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
train() {
  mpiexec -n 2 "$PFC" train input/smoke.toml --set frequent=1 --set checkpoint_every=2 "$@"
}

train --set output=\"$work/straight\" --set keep_checkpoints=100 >"$work/straight.log" 2>&1 ||
  { fail "the uninterrupted run failed"; exit 1; }
checkpoint_kb=$(du -sk "$work/straight/ckpt/step_0000002" | cut -f1)
metrics_kb=$(du -sk "$work/straight/metrics.h5" | cut -f1)
# full_disk NAME SIXTHS PATTERN: a run on a file system with room for metrics.h5 and SIXTHS/6
# checkpoints stops at the third with PATTERN in its message and in metrics.h5's summary,
# leaving no staging folder and `latest` on a checkpoint the uninterrupted run also wrote.
# With 2.5 checkpoints' room the third is refused before it is written: its tensors alone
# (about half the size of its files here) exceed what is free. With 2.75 they fit the check,
# and the disk runs out while the files are written.
full_disk() {
  local name=$1 sixths=$2 pattern=$3
  mkdir "$work/$name"
  mount -t tmpfs -o size=$((metrics_kb + checkpoint_kb * sixths / 6))k tmpfs "$work/$name"
  run=$work/$name/run
  expect_exit 1 "$name" "$pattern" -- train --set output=\"$run\" --set keep_checkpoints=2
  leftovers=$(find "$run/ckpt" -name '*.tmp')
  [ -z "$leftovers" ] || fail "$name: left behind: $leftovers"
  latest=$(cat "$run/ckpt/latest")
  for folder in "$run"/ckpt/step_*; do
    inspect same-checkpoint "$work/straight/ckpt/$(basename "$folder")" "$folder" ||
      fail "$folder is not the checkpoint the uninterrupted run wrote"
  done
  summary=$(inspect status "$run")
  case $summary in
    failed*"$pattern"*) ;;
    *) fail "$name: metrics.h5 says: $summary" ;;
  esac
  echo "ok   $name: latest = $latest, $(ls "$run/ckpt" | tr '\n' ' ')"
}
full_disk no_room 15 "MiB of disk for its files"
full_disk disk_full 17 "No space left on device"
run=$work/no_room/run
latest=$(cat "$run/ckpt/latest")
mount -o remount,size=64m "$work/no_room"
expect_exit 0 resume_with_space "resumed from $run/ckpt/$latest" -- \
  train --set output=\"$run\" --set keep_checkpoints=2 --set resume=true
inspect same-losses "$work/straight" "$run" 1 20 || fail "the resumed run's losses differ"
inspect same-checkpoint "$work/straight/ckpt/step_0000020" "$run/ckpt/step_0000020" ||
  fail "the resumed run's last checkpoint differs"

train --set output=\"$work/ro\" --set steps=10 >"$work/ro.log" 2>&1 || fail "the 10-step run failed"
before=$(inspect digest "$work/ro")
mount --bind "$work/ro" "$work/ro" && mount -o remount,ro,bind "$work/ro"
expect_exit 1 read_only "is on a read-only file system; a run writes its metrics and checkpoints" \
  -- train --set output=\"$work/ro\" --set resume=true
umount "$work/ro"
[ "$(inspect digest "$work/ro")" = "$before" ] || fail "the refused resume changed the run"
umount "$work/no_room" "$work/disk_full"
[ "$failures" -eq 0 ]
