#!/usr/bin/env bash
# A benchmark row script under a real Slurm (the one-node cluster of local_slurm.sh): one row
# submitted with sbatch in PFC_SMOKE=1 mode (CPU, tiny network, 2 ranks through srun
# --mpi=pmix), then each method's metrics.h5 checked through `pfc report`. Skips (77) as
# local_slurm.sh does (no munge or Slurm, not root, no pmix; tests/run.sh installs them).
set -euo pipefail

src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
pfc=${PFC:?PFC must name the pfc executable}
# shellcheck source=local_slurm.sh
source "$(dirname "$0")/local_slurm.sh"
tmp=$slurm_dir

# The row's #SBATCH lines ask for 8 GPUs and 8 tasks per node; the usual command-line options
# override them for two CPU ranks, as on a cluster.
out=$tmp/bench
submit_row() {
  PFC_SMOKE=1 PFC_BIN=$pfc PFC_JOBS_DIR=$src/jobs OMP_NUM_THREADS=1 \
    sbatch --parsable --chdir="$tmp" --ntasks-per-node=2 --cpus-per-task=1 --gpus-per-node=0 \
    --overcommit --time=5 "$@" "$src/jobs/rows/row_0125k.sbatch"
}
job=$(PFC_BENCH_OUTPUT=$out submit_row --output="$tmp/job_row.out")
echo "submitted job $job"
job_state=$(wait_job "$job")
cat "$tmp/job_row.out"
[[ $job_state == COMPLETED ]] || { echo "FAIL: job $job ended $job_state"; exit 1; }

"$pfc" report "$out" --format both --csv "$tmp/report.csv"
for column in DP MP "PFC 0.1"; do
  grep -q "^125000,$column,ok," "$tmp/report.csv" ||
    { echo "FAIL: no finished $column run at 125000 identities in the report"; exit 1; }
done
for method in dp mp pfc; do
  [[ -f $out/row_0125k/$method/metrics.h5 ]] || { echo "FAIL: no $method/metrics.h5"; exit 1; }
done

# A method that fails does not lose the row: every rank 1 fails at step 2 here (PFC_FAULT),
# and each method still runs, leaving its exit status.
fault_out=$tmp/bench_fault
job=$(PFC_BENCH_OUTPUT=$fault_out PFC_METHODS="dp pfc" PFC_FAULT=rank:1,step:2 \
  submit_row --output="$tmp/job_fault.out")
job_state=$(wait_job "$job")
[[ $job_state == COMPLETED ]] || { cat "$tmp/job_fault.out"; echo "FAIL: job $job ended $job_state"; exit 1; }
for method in dp pfc; do
  grep -qv '^exit 0$' "$fault_out/row_0125k/$method/done" 2>/dev/null ||
    { cat "$tmp/job_fault.out"; echo "FAIL: failing $method was not run or not recorded"; exit 1; }
done

# Slurm's warning before the time limit: SIGUSR1 to the batch script stops the running method
# cleanly (its metrics.h5 ends "ok" with the steps done), leaves it to be run again, and ends
# the row. PFC_REQUEUE=0 here; on a cluster the job would requeue itself.
signal_out=$tmp/bench_signal
job=$(PFC_BENCH_OUTPUT=$signal_out PFC_STEPS=1000000 PFC_SET=num_epoch=100000 PFC_REQUEUE=0 \
  submit_row --output="$tmp/job_signal.out")
for _ in $(seq 120); do  # until DP has logged a row: its handlers are installed by then
  grep -q '^125000,DP,running,[0-9]' <<<"$("$pfc" report "$signal_out" --format csv 2>/dev/null)" && break
  sleep 1
done
scancel --signal=USR1 --batch "$job"
job_state=$(wait_job "$job")
cat "$tmp/job_signal.out"
[[ $job_state == COMPLETED ]] || { echo "FAIL: signalled job $job ended $job_state"; exit 1; }
grep -q '^125000,DP,ok,[0-9]' <<<"$("$pfc" report "$signal_out" --format csv)" ||
  { echo "FAIL: the stopped DP run did not end ok"; exit 1; }
[[ ! -e $signal_out/row_0125k/dp/done && ! -e $signal_out/row_0125k/mp ]] ||
  { echo "FAIL: after the signal, DP was marked done or MP started"; exit 1; }
grep -q 'stopped during dp' "$tmp/job_signal.out" || { echo "FAIL: no stop message"; exit 1; }
echo "slurm row: ok"
