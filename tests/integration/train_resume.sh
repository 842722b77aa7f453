#!/usr/bin/env bash
# Resume: 20 steps straight equal 10 steps + resume for 10 (same ranks, MP and PFC 0.1): the
# printed losses match and metrics.h5's /steps/loss agree to 1e-6 relative. A rank (1, then 0)
# killed with SIGKILL while writing the step-10 checkpoint ends the job (no rank hangs), leaves
# `latest` on step 5 and no half-written folder that counts as a checkpoint, and a resume from
# step 5 reproduces the straight run's losses. A checkpoint re-split for 3 ranks and back for 2
# holds exactly the state saved; a checkpoint saved on 2 ranks resumes on 3 and one saved on 3
# resumes on 2; a SIGTERM/SIGUSR1 checkpoints and exits 0; an injected fault ends
# both ranks with a non-zero code and leaves `latest` intact.
set -euo pipefail
python=/usr/bin/python3
if ! "$python" -c 'import h5py' 2>/dev/null; then
  echo "skipped: $python cannot import h5py"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "${PFC_SOURCE_DIR:?}"
losses() { grep -o "Loss [0-9.]*" "$1" | awk '{print $2}'; }

# same_losses A B FIRST LAST: the two runs' metrics.h5 log the same losses (same_losses.py).
same_losses() { "$python" tests/integration/same_losses.py "$@"; }

for method in mp pfc; do
  rate=1.0; [ $method = pfc ] && rate=0.1
  common=(--set method=$method --set sample_rate=$rate --set frequent=1 --set checkpoint_every=10)
  mpiexec -n 2 "$PFC" train input/smoke.toml "${common[@]}" --set output=\"$out/$method-straight\" > "$out/$method-straight.log"
  mpiexec -n 2 "$PFC" train input/smoke.toml "${common[@]}" --set output=\"$out/$method-split\" --set steps=10 > "$out/$method-a.log"
  mpiexec -n 2 "$PFC" train input/smoke.toml "${common[@]}" --set output=\"$out/$method-split\" --set resume=true > "$out/$method-b.log"
  diff <(losses "$out/$method-straight.log" | tail -n 10) <(losses "$out/$method-b.log")
  echo -n "$method: 20 straight == 10 + resume 10; "
  same_losses "$out/$method-straight/metrics.h5" "$out/$method-split/metrics.h5" 11 20
done

# SIGKILL on one rank in the middle of writing its shard of the step-10 checkpoint (PFC_FAULT
# at:checkpoint): rank 1, whose peer must then be ended by mpiexec while it waits in a
# collective, and rank 0, which also writes metrics.h5. `timeout` turns a hang into a failure.
for victim in 1 0; do
  pfc_args=(--set method=pfc --set sample_rate=0.1 --set frequent=1 --set checkpoint_every=5
            --set output=\"$out/killed-$victim\")
  code=0
  PFC_FAULT=rank:$victim,step:10,at:checkpoint timeout 60 mpiexec -n 2 "$PFC" train \
    input/smoke.toml "${pfc_args[@]}" > "$out/killed-$victim.log" 2>&1 || code=$?
  if [ $code -eq 0 ] || [ $code -eq 124 ]; then
    echo "rank $victim killed at the step-10 checkpoint: exit $code (124: the job hung)"
    cat "$out/killed-$victim.log"; exit 1
  fi
  grep -q "rank $victim kills itself while writing checkpoint 10" "$out/killed-$victim.log"
  ckpt="$out/killed-$victim/ckpt"
  [ "$(cat "$ckpt/latest")" = step_0000005 ]
  # The kill struck mid-write: the shard of step 10 exists in the staging folder, model.h5
  # (written after every shard) does not, and no folder of step 10 has a checkpoint's name.
  [ -f "$ckpt/step_0000010.tmp/shard_0000$victim.h5" ]
  [ ! -e "$ckpt/step_0000010.tmp/model.h5" ]
  complete=$(find "$ckpt" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended \
    -regex '.*/step_[0-9]{7}' -printf '%f ')
  [ "$complete" = "step_0000005 " ] ||
    { echo "checkpoint folders after the kill: $complete"; exit 1; }
  [ -f "$ckpt/step_0000005/model.h5" ]
  echo "rank $victim killed at the step-10 checkpoint: exit $code, latest = $(cat "$ckpt/latest")"
  mpiexec -n 2 "$PFC" train input/smoke.toml "${pfc_args[@]}" --set resume=true \
    > "$out/killed-$victim-resume.log" 2>&1
  grep -q "resumed from $ckpt/step_0000005 at step 5" "$out/killed-$victim-resume.log"
  grep -q "Global Step: 20" "$out/killed-$victim-resume.log"
  [ "$(cat "$ckpt/latest")" = step_0000020 ]
  [ ! -e "$ckpt/step_0000010.tmp" ]
  echo -n "resumed from step 5; "
  same_losses "$out/pfc-straight/metrics.h5" "$out/killed-$victim/metrics.h5" 6 20
done

# The state itself survives a change of rank count, tensor by tensor: the 2-rank checkpoint of
# step 20 is taken up by 3 ranks (resume_from, no step trained, so they write it back at once in
# their own split), then by 2 ranks again; every backbone tensor, the global class-centre
# matrix and its momentum (virtual datasets over the shards) and every state attribute (step,
# schedule, loss scale, data position) must be bit-identical to the original.
reshard() {  # reshard RANKS FROM OUTPUT
  mpiexec -n "$1" "$PFC" train input/smoke.toml --set sample_rate=0.1 --set steps=20 \
    --set resume_from=\"$2\" --set output=\"$3\" > "$3.log" 2>&1 || { cat "$3.log"; exit 1; }
}
reshard 3 "$out/pfc-split/ckpt/step_0000020" "$out/resplit-3"
reshard 2 "$out/resplit-3" "$out/resplit-2"
echo -n "2 -> 3 -> 2 ranks: "
"$python" tests/integration/same_checkpoint.py "$out/pfc-split/ckpt/step_0000020" \
  "$out/resplit-3/ckpt/step_0000020" "$out/resplit-2/ckpt/step_0000020" --world-sizes 3,2

# 2 -> 3 ranks: the state is read back and training goes on.
mpiexec -n 3 "$PFC" train input/smoke.toml --set output=\"$out/pfc-split\" --set sample_rate=0.1 \
  --set resume=true --set steps=25 --set frequent=1 > "$out/resize.log"
grep -q "Global Step: 25" "$out/resize.log"
[ "$(cat "$out/pfc-split/ckpt/latest")" = step_0000025 ]
# 3 -> 2 ranks: the checkpoint just written by 3 ranks resumes on 2.
mpiexec -n 2 "$PFC" train input/smoke.toml --set output=\"$out/pfc-split\" --set sample_rate=0.1 \
  --set resume=true --set steps=28 --set frequent=1 > "$out/shrink.log" 2>&1
grep -q "resumed from $out/pfc-split/ckpt/step_0000025 at step 25" "$out/shrink.log"
for step in 26 27 28; do grep -q "Global Step: $step " "$out/shrink.log"; done
[ "$(cat "$out/pfc-split/ckpt/latest")" = step_0000028 ]
echo "2 -> 3 -> 2 ranks: trained on to step 28"
# An injected fault on rank 1 ends the job with an error; latest stays on step 29.
if PFC_FAULT=rank:1,step:30 mpiexec -n 2 "$PFC" train input/smoke.toml \
   --set output=\"$out/pfc-split\" --set sample_rate=0.1 --set resume=true --set checkpoint_every=1 \
   --set steps=33 > "$out/fault.log" 2>&1; then
  echo "the injected fault did not fail the run"; exit 1
fi
grep -q "injected fault on rank 1 at step 30" "$out/fault.log"
[ "$(cat "$out/pfc-split/ckpt/latest")" = step_0000029 ]
echo "fault ended the job; latest = $(cat "$out/pfc-split/ckpt/latest")"
# stops_cleanly NAME SIGNAL CMD...: runs CMD (a training command) into $out/NAME and sends it
# SIGNAL after step 3: it must finish the step, checkpoint and exit 0.
stops_cleanly() {
  local name=$1 signal=$2
  shift 2
  "$@" --set output=\"$out/$name\" --set num_epoch=1000 --set steps=0 --set frequent=1 \
    > "$out/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do grep -q "Global Step: 3" "$out/$name.log" && break; sleep 0.2; done
  kill -"$signal" "$pid"
  wait "$pid"
  grep -q "stopped by signal" "$out/$name.log"
  echo "SIG$signal: exit 0, checkpoint $(cat "$out/$name/ckpt/latest")"
}
# SIGUSR1 (Slurm's warning; mpiexec forwards it to the ranks).
stops_cleanly signal USR1 mpiexec -n 2 "$PFC" train input/smoke.toml
# SIGTERM (a scheduler ending the job; under Slurm every task gets it): a single process here,
# so that the signal reaches pfc itself rather than a launcher.
stops_cleanly term TERM "$PFC" train input/smoke.toml
