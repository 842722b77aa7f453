#!/usr/bin/env bash
# A benchmark row script under a real Slurm: a one-node cluster on localhost (munged,
# slurmctld, slurmd started here with their state in a temporary folder), one row submitted
# with sbatch in PFC_SMOKE=1 mode (CPU, tiny network, 2 ranks through srun --mpi=pmix), then
# each method's metrics.h5 checked through `pfc report`. Skips (77) without munge and Slurm
# (tests/run.sh installs them), without root (slurmd runs as root), or without srun's pmix.
set -euo pipefail

src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
pfc=${PFC:?PFC must name the pfc executable}
for tool in munged slurmctld slurmd sbatch srun scontrol sinfo; do
  command -v "$tool" >/dev/null || { echo "skip: $tool is not installed (munge, slurm-wlm)"; exit 77; }
done
[[ $(id -u) == 0 ]] || { echo "skip: a local slurmd needs root"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pfc_slurm.XXXXXX")
chmod 700 "$tmp"
pids=()
job=
cleanup() {
  local rc=$?
  [[ -n $job ]] && scancel "$job" 2>/dev/null || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if ((rc != 0 && rc != 77)); then
    for log in "$tmp"/*.log "$tmp"/job.out; do
      [[ -f $log ]] && { echo "---- $log"; tail -n 40 "$log"; }
    done
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# Munge with its own key and socket, so that nothing of the host's setup is needed or touched.
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge.key"
mkdir -m 700 "$tmp/munge"
munged --foreground --force --key-file="$tmp/munge.key" --socket="$tmp/munge/socket" \
  --pid-file="$tmp/munge/pid" --seed-file="$tmp/munge/seed" --log-file="$tmp/munged.log" \
  >"$tmp/munged.out" 2>&1 &
pids+=($!)

# Ports from this process id, so that two checkouts testing at once do not collide.
port=$((20000 + ($$ % 5000) * 2))
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=pfctest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$tmp/slurm.conf
# The row scripts launch with srun --mpi=pmix, as on clusters; OpenMPI's ranks need it.
srun --mpi=list 2>&1 | grep -qw pmix || { echo "skip: srun offers no pmix (slurm-wlm's mpi_pmix plugin)"; exit 77; }
sed -i 's/^MpiDefault=none$/MpiDefault=pmix/' "$SLURM_CONF"

for _ in $(seq 50); do [[ -S $tmp/munge/socket ]] && break; sleep 0.1; done
slurmctld -D -i >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost >"$tmp/slurmd.out" 2>&1 &
pids+=($!)

state=
for _ in $(seq 60); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
  [[ $state == idle* ]] && break
  sleep 1
done
[[ $state == idle* ]] || { echo "FAIL: the local node did not become idle (state '$state')"; exit 1; }
echo "slurm up: node localhost $state"

# Waits for job $1 to end; prints its final state.
wait_job() {
  local state=
  for _ in $(seq 150); do
    state=$(scontrol show job "$1" -o 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL) break ;;
    esac
    sleep 1
  done
  echo "$state"
}

# The row's #SBATCH lines ask for 8 GPUs and 8 tasks per node; the usual command-line options
# override them for two CPU ranks, as on a cluster.
out=$tmp/bench
submit_row() {
  PFC_SMOKE=1 PFC_BIN=$pfc PFC_JOBS=$src/jobs OMP_NUM_THREADS=1 \
    sbatch --parsable --chdir="$tmp" --ntasks-per-node=2 --cpus-per-task=1 --gpus-per-node=0 \
    --overcommit --time=5 "$@" "$src/jobs/rows/row_0125k.sbatch"
}
job=$(PFC_BENCH_OUTPUT=$out submit_row --output="$tmp/job.out")
echo "submitted job $job"
job_state=$(wait_job "$job")
cat "$tmp/job.out"
[[ $job_state == COMPLETED ]] || { echo "FAIL: job $job ended $job_state"; exit 1; }
job=

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
job=
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
  "$pfc" report "$signal_out" --format csv 2>/dev/null | grep -q '^125000,DP,running,[0-9]' && break
  sleep 1
done
scancel --signal=USR1 --batch "$job"
job_state=$(wait_job "$job")
cat "$tmp/job_signal.out"
[[ $job_state == COMPLETED ]] || { echo "FAIL: signalled job $job ended $job_state"; exit 1; }
job=
"$pfc" report "$signal_out" --format csv | grep -q '^125000,DP,ok,[0-9]' ||
  { echo "FAIL: the stopped DP run did not end ok"; exit 1; }
[[ ! -e $signal_out/row_0125k/dp/done && ! -e $signal_out/row_0125k/mp ]] ||
  { echo "FAIL: after the signal, DP was marked done or MP started"; exit 1; }
grep -q 'stopped during dp' "$tmp/job_signal.out" || { echo "FAIL: no stop message"; exit 1; }
echo "slurm row: ok"
