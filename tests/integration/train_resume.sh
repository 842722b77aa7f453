#!/usr/bin/env bash
# Resume: 20 steps straight equal 10 steps + resume for 10 (same ranks, MP and PFC 0.5), loss
# for loss; a checkpoint resumed on 3 ranks (saved on 2) trains on; a SIGTERM checkpoints and
# exits 0; an injected fault ends both ranks with a non-zero code and leaves `latest` intact.
set -euo pipefail
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "${PFC_SOURCE_DIR:?}"
losses() { grep -o "Loss [0-9.]*" "$1" | awk '{print $2}'; }
for method in mp pfc; do
  rate=1.0; [ $method = pfc ] && rate=0.5
  common=(--set method=$method --set sample_rate=$rate --set frequent=1 --set checkpoint_every=10)
  mpiexec -n 2 "$PFC" train input/smoke.toml "${common[@]}" --set output=\"$out/$method-straight\" > "$out/$method-straight.log"
  mpiexec -n 2 "$PFC" train input/smoke.toml "${common[@]}" --set output=\"$out/$method-split\" --set steps=10 > "$out/$method-a.log"
  mpiexec -n 2 "$PFC" train input/smoke.toml "${common[@]}" --set output=\"$out/$method-split\" --set resume=true > "$out/$method-b.log"
  diff <(losses "$out/$method-straight.log" | tail -n 10) <(losses "$out/$method-b.log")
  echo "$method: 20 straight == 10 + resume 10"
done
# 2 -> 3 ranks: the state is read back and training goes on.
mpiexec -n 3 "$PFC" train input/smoke.toml --set output=\"$out/pfc-split\" --set sample_rate=0.5 \
  --set resume=true --set steps=25 --set frequent=1 > "$out/resize.log"
grep -q "Global Step: 25" "$out/resize.log"
[ "$(cat "$out/pfc-split/ckpt/latest")" = step_0000025 ]
# An injected fault on rank 1 ends the job with an error; latest stays on step 25.
if PFC_FAULT=rank:1,step:27 mpiexec -n 2 "$PFC" train input/smoke.toml --set output=\"$out/pfc-split\" \
   --set sample_rate=0.5 --set resume=true --set checkpoint_every=1 --set steps=30 > "$out/fault.log" 2>&1; then
  echo "the injected fault did not fail the run"; exit 1
fi
grep -q "injected fault on rank 1 at step 27" "$out/fault.log"
[ "$(cat "$out/pfc-split/ckpt/latest")" = step_0000026 ]
echo "fault ended the job; latest = $(cat "$out/pfc-split/ckpt/latest")"
# SIGUSR1 (Slurm's warning; mpiexec forwards it): the ranks finish the step, checkpoint, exit 0.
mpiexec -n 2 "$PFC" train input/smoke.toml --set output=\"$out/signal\" --set num_epoch=1000 \
  --set steps=0 --set frequent=1 > "$out/signal.log" 2>&1 &
launcher=$!
for _ in $(seq 100); do grep -q "Global Step: 3" "$out/signal.log" && break; sleep 0.2; done
kill -USR1 "$launcher"
wait "$launcher"
grep -q "stopped by signal" "$out/signal.log"
step=$(cat "$out/signal/ckpt/latest")
echo "SIGUSR1: exit 0, checkpoint $step"
