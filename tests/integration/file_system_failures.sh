#!/usr/bin/env bash
# A full disk and a read-only file system, on real (namespaced) mounts. Space running out
# while a checkpoint is written stops the run with exit 1 and "No space left on device" in
# the message (and in metrics.h5's summary); no half-written folder, latest.tmp or folder that
# looks complete is left, `latest` names a checkpoint identical to the uninterrupted run's,
# and once there is space again the run resumes from it and ends bit-identically. A resume on
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
# Room for metrics.h5 and two and a half checkpoints: the third one runs out of space.
checkpoint_kb=$(du -sk "$work/straight/ckpt/step_0000002" | cut -f1)
metrics_kb=$(du -sk "$work/straight/metrics.h5" | cut -f1)
mkdir "$work/small"
mount -t tmpfs -o size=$((metrics_kb + checkpoint_kb * 5 / 2))k tmpfs "$work/small"
run=$work/small/run
expect_exit 1 disk_full "No space left on device" -- \
  train --set output=\"$run\" --set keep_checkpoints=2
leftovers=$(find "$run/ckpt" -name '*.tmp')
[ -z "$leftovers" ] || fail "left behind: $leftovers"
latest=$(cat "$run/ckpt/latest")
for folder in "$run"/ckpt/step_*; do
  inspect same-checkpoint "$work/straight/ckpt/$(basename "$folder")" "$folder" ||
    fail "$folder is not the checkpoint the uninterrupted run wrote"
done
summary=$(inspect status "$run")
case $summary in
  failed*"No space left on device"*) ;;
  *) fail "metrics.h5 says: $summary" ;;
esac
echo "ok   full disk: latest = $latest, $(ls "$run/ckpt" | tr '\n' ' ')"
mount -o remount,size=64m "$work/small"
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
umount "$work/small"
[ "$failures" -eq 0 ]
