#!/usr/bin/env bash
# jobs/train.sbatch under a real Slurm (the one-node cluster of local_slurm.sh) on the CPU smoke
# config, 2 ranks: while the first attempt trains, h5py reads its metrics.h5 live
# (swmr=True); then the job is preempted (SIGUSR1 to its batch shell, as Slurm's warning before
# the time limit), checkpoints, requeues itself and finishes. The job ends COMPLETED after one
# restart; its Slurm log (--open-mode=append) and output/training.log hold both attempts;
# metrics.h5 has every logged step once and the job's Slurm attributes; the final checkpoint
# equals, tensor by tensor, that of the same run trained without a stop. With PFC_REQUEUE=0 a
# stopped job ends with exit code 75, a job without a config with 2. Skips (77) as
# local_slurm.sh does, or when /usr/bin/python3 lacks h5py.
set -euo pipefail

src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
pfc=${PFC:?PFC must name the pfc executable}
python=/usr/bin/python3
"$python" -c 'import h5py' 2>/dev/null || { echo "skip: $python has no h5py"; exit 77; }
# shellcheck source=local_slurm.sh
source "$(dirname "$0")/local_slurm.sh"
tmp=$slurm_dir

fail() { echo "FAIL: $*"; exit 1; }
# Long enough that the signal sent once step 10 is logged finds the run still training: the
# smoke network takes a few milliseconds a step, and 40 steps could end before the signal came
# (more epochs than the smoke config's 62 steps hold).
steps=1000
settings=(--set steps=$steps --set num_epoch=100 --set frequent=2 --set checkpoint_every=500)

# The same run without a stop, outside Slurm: the state the requeued job must end in.
mpiexec -n 2 "$pfc" train "$src/input/smoke.toml" "${settings[@]}" \
  --set output=\""$tmp/straight"\" >"$tmp/straight.log" 2>&1 ||
  { cat "$tmp/straight.log"; fail "the uninterrupted run failed"; }

# train.sbatch asks for 8 GPUs and 8 tasks a node; the usual options make it 2 CPU ranks.
submit_train() {
  PFC_BIN=$pfc PFC_JOBS_DIR=$src/jobs OMP_NUM_THREADS=1 \
    sbatch --parsable --chdir="$tmp" --ntasks-per-node=2 --cpus-per-task=1 --gpus-per-node=0 \
    --overcommit --time=10 "$@"
}
run=$tmp/run
job=$(submit_train --output="$tmp/job_train.out" "$src/jobs/train.sbatch" \
  "$src/input/smoke.toml" "${settings[@]}" --set output=\""$run"\")
echo "submitted job $job"

# Live: h5py opens metrics.h5 while the first attempt writes it, and follows it (refresh)
# until step 10 or later is there, the status still "running".
"$python" - "$run/metrics.h5" <<'PY' || fail "metrics.h5 could not be read during the run"
import sys, time, h5py
deadline = time.time() + 120
while time.time() < deadline:
    try:
        f = h5py.File(sys.argv[1], "r", swmr=True)
        break
    except (OSError, FileNotFoundError):
        time.sleep(0.2)  # not there yet, or still being set up
else:
    sys.exit("metrics.h5 did not appear")
steps = f["steps/step"]
while time.time() < deadline:
    steps.refresh()
    if steps.shape[0] and steps[-1] >= 10:
        status = f["summary"].attrs["status"]
        print(f"read live: {steps.shape[0]} rows, last step {steps[-1]}, status {status}")
        sys.exit(0 if status == "running" else f"status {status} while training")
    time.sleep(0.1)
sys.exit("no row for step 10")
PY
scancel --signal=USR1 --batch "$job"
echo "signalled job $job"

# Requeued, the job waits for its begin time (10 s here: cred_expire in local_slurm.sh).
state=$(wait_job "$job")
cat "$tmp/job_train.out"
[[ $state == COMPLETED ]] || fail "job $job ended $state"
[[ $(scontrol show job "$job" -o | grep -o 'Restarts=[0-9]*') == Restarts=1 ]] ||
  fail "job $job did not run exactly twice"

# Both attempts in the Slurm log (appended) and in training.log.
for attempt in "attempt 1," "attempt 2,"; do
  grep -q "train.sbatch: job $job $attempt" "$tmp/job_train.out" || fail "no '$attempt' in the log"
done
grep -q "stopped by signal after step [0-9]*; checkpoint written" "$tmp/job_train.out" ||
  fail "the log does not say the run stopped with a checkpoint"
grep -q "requeueing job $job" "$tmp/job_train.out" || fail "the log does not say it requeued"
grep -q "train.sbatch: the run is done ($steps steps)" "$tmp/job_train.out" ||
  fail "no end in the log"
[[ -z $(find "$tmp" -maxdepth 1 -name '.pfc-train-*') ]] ||
  fail "train.sbatch left its outcome file behind"
log=$run/training.log
grep -q "holds no checkpoint; starting a new run" "$log" || fail "training.log: no fresh start"
grep -q "has a checkpoint; continuing the run" "$log" || fail "training.log: no continuation"
for restart in 0 1; do
  grep -q "pfc train: .*(Slurm job $job, restart $restart)" "$log" ||
    fail "training.log lacks attempt $restart"
done
grep -q "info: Training: Speed .* Global Step: $steps " "$log" || fail "training.log: no last step"

# metrics.h5: each logged step once across the two attempts; the job's attributes.
"$python" - "$run/metrics.h5" "$job" $steps <<'PY' || fail "metrics.h5 after the requeue"
import sys, h5py
path, job, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
f = h5py.File(path, "r")
logged = list(f["steps/step"][:])
assert logged == list(range(2, steps + 1, 2)), logged
assert f.attrs["slurm_job_id"] == job, f.attrs["slurm_job_id"]
assert f.attrs["slurm_restart_count"] == "1", f.attrs["slurm_restart_count"]
assert len(f.attrs["resumed_from_steps"]) == 1, f.attrs["resumed_from_steps"]
assert f["summary"].attrs["status"] == "ok", f["summary"].attrs["status"]
print(f"metrics.h5: steps 2..{steps} once each, resumed from step",
      f.attrs["resumed_from_steps"][0])
PY
last=ckpt/$(printf 'step_%07d' $steps)
[[ $(cat "$run/ckpt/latest") == "${last#ckpt/}" ]] || fail "latest is $(cat "$run/ckpt/latest")"
"$python" "$src/tests/integration/same_checkpoint.py" "$tmp/straight/$last" "$run/$last" ||
  fail "the requeued run's final checkpoint differs from the uninterrupted run's"

# Not requeued (PFC_REQUEUE=0): the stopped job says so with exit code 75; no config: 2.
stopped=$tmp/stopped
job=$(PFC_REQUEUE=0 submit_train --output="$tmp/job_stopped.out" "$src/jobs/train.sbatch" \
  "$src/input/smoke.toml" --set steps=0 --set num_epoch=1000 --set frequent=2 \
  --set output=\""$stopped"\")
for _ in $(seq 240); do
  grep -q "Global Step: 4 " "$stopped/training.log" 2>/dev/null && break
  sleep 0.5
done
scancel --signal=USR1 --batch "$job"
state=$(wait_job "$job")
[[ $state == FAILED && $(scontrol show job "$job" -o) == *"ExitCode=75:0"* ]] ||
  { cat "$tmp/job_stopped.out"; fail "a stopped job that may not requeue ended $state, not 75"; }
[[ -f $stopped/ckpt/latest ]] || fail "the stopped job wrote no checkpoint"
job=$(submit_train --output="$tmp/job_usage.out" "$src/jobs/train.sbatch")
state=$(wait_job "$job")
[[ $state == FAILED && $(scontrol show job "$job" -o) == *"ExitCode=2:0"* ]] ||
  { cat "$tmp/job_usage.out"; fail "train.sbatch without a config ended $state, not 2"; }
grep -q "usage: sbatch" "$tmp/job_usage.out" || fail "no usage message"
echo "slurm train: ok"
