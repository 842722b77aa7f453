#!/usr/bin/env bash
# A rank that stops answering (SIGSTOP) no longer hangs the others: with collective_timeout_s =
# 3 on 3 ranks, both live ranks stop within seconds, each with a message naming rank 2 as the
# one that did not arrive; the job ends non-zero (the stopped rank with it), metrics.h5 says
# "failed" with that message, and the last checkpoint is the one an uninterrupted run writes.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
train() {
  mpiexec -n 3 "$PFC" train input/smoke.toml --set batch_size=4 --set frequent=1 \
    --set checkpoint_every=5 --set num_epoch=1000 --set collective_timeout_s=3 "$@"
}

run=$work/run
mpiexec -n 3 "$PFC" train input/smoke.toml --set batch_size=4 --set frequent=1 \
  --set checkpoint_every=5 --set num_epoch=1000 --set collective_timeout_s=3 \
  --set output=\"$run\" --set steps=0 >"$work/run.log" 2>&1 &
launcher=$!
for _ in $(seq 300); do grep -q "Global Step: 7 " "$work/run.log" && break; sleep 0.1; done
victim=
for pid in $(pgrep -f -- "output=\"$run\""); do
  grep -qx OMPI_COMM_WORLD_RANK=2 <<<"$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null)" && victim=$pid
done
[ -n "$victim" ] || { fail "rank 2 not found"; kill "$launcher"; exit 1; }
kill -STOP "$victim"
stopped_at=$(date +%s)
for _ in $(seq 60); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$launcher" 2>/dev/null; then
  fail "the job still runs 30 s after rank 2 stopped"
  kill -CONT "$victim"
  kill -KILL "$launcher"
fi
code=0
wait "$launcher" || code=$?
took=$(($(date +%s) - stopped_at))
# The launcher's daemon kills the stopped rank too (SIGKILL ends a stopped process).
for _ in $(seq 50); do
  grep -qs '^State:.*[RSTD]' "/proc/$victim/status" || break
  sleep 0.2
done
grep -qs '^State:.*[RSTD]' "/proc/$victim/status" &&
  { fail "the stopped rank outlived the job"; kill -KILL "$victim"; }
[ "$code" -ne 0 ] || fail "the job ended with exit 0"
for rank in 0 1; do
  said="rank $rank\] error: collective #[0-9]* (.*) on rank $rank has not completed"
  grep -q "$said .*: rank 2 did not arrive" "$work/run.log" ||
    fail "rank $rank did not say that rank 2 did not arrive"
done
case $(inspect status "$run") in
  failed*"rank 2 did not arrive"*) ;;
  *) fail "metrics.h5 says: $(inspect status "$run")" ;;
esac
# The last checkpoint before the stop is the one a run that was never stopped writes.
latest=$(cat "$run/ckpt/latest")
train --set output=\"$work/reference\" --set steps=$((10#${latest#step_})) \
  >"$work/reference.log" 2>&1 || fail "the reference run failed"
inspect same-checkpoint "$work/reference/ckpt/$latest" "$run/ckpt/$latest" ||
  fail "$latest differs from the uninterrupted run's"
echo "rank 2 stopped: the job ended after ${took} s with exit $code"
[ "$failures" -eq 0 ]
