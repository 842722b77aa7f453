#!/usr/bin/env bash
# SIGTERM sent to mpiexec itself (a user's kill, or a batch system that signals the launcher):
# Open MPI's mpiexec forwards it to the ranks, which finish their step, checkpoint and exit 0,
# but mpiexec reports exit 1 for any job it was told to terminate (and SIGKILLs the ranks a
# second later): the run is clean, the launcher's code is not ours (jobs/README.md: send
# SIGUSR1 to mpiexec, or run under srun, for a clean exit code and time to checkpoint).
# Checked here: no rank exits non-zero, the checkpoint is complete, and the run resumes from it
# to end exactly as an uninterrupted run does. And a rank that no safe point reaches (blocked
# writing to a pipe) ends on a second SIGTERM, by the signal, its MPI session folder removed.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
# Batches of 64: with the smoke config's 8 a step takes under 5 ms, and a progress line every
# step fills the pipe to mpiexec, which stops reading once it is told to terminate, so that rank
# 0 blocks in its write until mpiexec's SIGKILL instead of checkpointing.
train() {
  mpiexec -n 2 "$PFC" train input/smoke.toml --set frequent=1 --set checkpoint_every=0 \
    --set num_epoch=1000 --set batch_size=64 "$@"
}

run=$work/run
# mpiexec itself in the background (not a shell function around it), so that the signal
# reaches it. The smoke run's checkpoint takes well under the second mpiexec allows.
mpiexec -n 2 "$PFC" train input/smoke.toml \
  --set frequent=1 --set checkpoint_every=0 --set num_epoch=1000 --set batch_size=64 \
  --set output=\"$run\" --set steps=0 >"$work/run.log" 2>&1 &
launcher=$!
for _ in $(seq 300); do grep -q "Global Step: 3 " "$work/run.log" && break; sleep 0.1; done
kill -TERM "$launcher"
code=0
wait "$launcher" || code=$?
{ [ "$code" -eq 0 ] || [ "$code" -eq 1 ]; } || fail "mpiexec exited with $code"
grep -q "exited with non-zero status" "$work/run.log" && fail "a rank exited non-zero"
grep -q "stopped by signal after step [0-9]*; checkpoint written" "$work/run.log" ||
  fail "no clean stop in the log"
case $(inspect status "$run") in
  "ok"*"stopped by signal"*) ;;
  *) fail "metrics.h5 says: $(inspect status "$run")" ;;
esac
stopped=$((10#$(sed 's/step_//' "$run/ckpt/latest")))
echo "SIGTERM to mpiexec: exit $code, checkpoint at step $stopped"
last=$((stopped + 3))
expect_exit 0 resume "resumed from $run/ckpt/step_$(printf %07d "$stopped") at step $stopped" -- \
  train --set output=\"$run\" --set resume=true --set steps=$last
train --set output=\"$work/straight\" --set steps=$last >"$work/straight.log" 2>&1 ||
  fail "the uninterrupted run failed"
inspect same-losses "$work/straight" "$run" 1 "$last" || fail "the resumed losses differ"
inspect same-checkpoint "$work/straight/ckpt/step_$(printf %07d $last)" \
  "$run/ckpt/step_$(printf %07d $last)" || fail "the last checkpoint differs"
# A rank blocked where no safe point comes (writing its progress lines to a pipe nobody reads):
# the first SIGTERM only asks it to stop; the second ends it at once, by the signal, with its
# MPI session folder removed from $TMPDIR and the run's files whole.
mkdir "$work/tmpdir"
TMPDIR="$work/tmpdir" "$python" - "$PFC" "$work/blocked" <<'PY' || fail "a blocked rank"
import os, signal, subprocess, sys, time
pfc, run = sys.argv[1:]
p = subprocess.Popen([pfc, "train", "input/smoke.toml", "--set", "frequent=1",
                      "--set", "checkpoint_every=0", "--set", "num_epoch=1000",
                      "--set", "steps=0", "--set", f'output="{run}"'],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # never read
deadline = time.time() + 120
while "pipe" not in open(f"/proc/{p.pid}/wchan").read():
    if time.time() > deadline or p.poll() is not None:
        p.kill()
        sys.exit("pfc train never blocked in its write")
    time.sleep(0.05)
if not os.listdir(os.environ["TMPDIR"]):
    sys.exit("no MPI session folder in $TMPDIR: the check below proves nothing")
p.send_signal(signal.SIGTERM)
time.sleep(1)
if p.poll() is not None:
    sys.exit(f"the first SIGTERM ended it ({p.returncode})")
p.send_signal(signal.SIGTERM)
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    sys.exit("still running 10 s after the second SIGTERM")
if rc != -signal.SIGTERM:
    sys.exit(f"ended with {rc}, not by SIGTERM")
left = os.listdir(os.environ["TMPDIR"])
if left:
    sys.exit(f"left {left} in $TMPDIR")
print("ok   a blocked rank ends on the second SIGTERM, its session folder removed")
PY
[ -z "$(find "$work/blocked" -name '*.tmp')" ] || fail "the blocked rank left a temporary"
[ "$failures" -eq 0 ]
