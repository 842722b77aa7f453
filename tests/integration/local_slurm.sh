# Sourced by the Slurm integration tests: a one-node Slurm cluster on localhost (munged,
# slurmctld and slurmd started by this shell, their state, logs and keys in a private temporary
# folder, ports derived from the process id), so that the job scripts are tested under a real
# sbatch/srun without touching the host's own setup. After sourcing:
#   $slurm_dir   the private folder, removed on exit; when the test failed, the daemons' logs
#                and the jobs' output written there as job*.out are printed first
#   SLURM_CONF   exported, pointing at the private slurm.conf
#   wait_job JOB [SECONDS]   waits until JOB has ended; prints its final state
# It exits 77 (skip) without munge and Slurm, without root (slurmd runs as root), or without
# srun's pmix plugin (OpenMPI's ranks need it).
set -euo pipefail

for tool in munged slurmctld slurmd sbatch srun scontrol scancel sinfo; do
  command -v "$tool" >/dev/null ||
    { echo "skip: $tool is not installed (munge, slurm-wlm)"; exit 77; }
done
[[ $(id -u) == 0 ]] || { echo "skip: a local slurmd needs root"; exit 77; }

slurm_dir=$(mktemp -d "${TMPDIR:-/tmp}/pfc_slurm.XXXXXX")
chmod 700 "$slurm_dir"
slurm_pids=()
stop_local_slurm() {
  local rc=$?
  # Every job of this private cluster: nothing outlives the test.
  [[ -f ${SLURM_CONF:-} ]] && scancel --full --user="$(id -un)" 2>/dev/null || true
  for pid in "${slurm_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${slurm_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if ((rc != 0 && rc != 77)); then
    for log in "$slurm_dir"/*.log "$slurm_dir"/job*.out; do
      [[ -f $log ]] && { echo "---- $log"; tail -n 40 "$log"; }
    done
  fi
  rm -rf "$slurm_dir"
}
trap stop_local_slurm EXIT

# Munge with its own key and socket, so that nothing of the host's setup is needed or touched.
dd if=/dev/urandom of="$slurm_dir/munge.key" bs=1024 count=1 status=none
chmod 400 "$slurm_dir/munge.key"
mkdir -m 700 "$slurm_dir/munge"
munged --foreground --force --key-file="$slurm_dir/munge.key" \
  --socket="$slurm_dir/munge/socket" --pid-file="$slurm_dir/munge/pid" \
  --seed-file="$slurm_dir/munge/seed" --log-file="$slurm_dir/munged.log" \
  >"$slurm_dir/munged.out" 2>&1 &
slurm_pids+=($!)

# Ports from this process id, so that two checkouts testing at once do not collide.
slurm_port=$((20000 + ($$ % 5000) * 2))
slurm_host=$(hostname -s)
# The node's CPUs as slurmd finds them: GNU nproc counts OMP_NUM_THREADS (1 in the tests'
# environment) instead, and a node configured below its hardware runs no 2-task job.
cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
# Job ids from this process id too: Open MPI names a job's shared-memory segments after its
# Slurm job and step, so two private clusters that both ran "job 1" on one host would share
# them (vader_segment.*; a rank crashing in vader's receive path while the other Slurm test
# ran is what that looks like).
first_job_id=$((1000 + ($$ % 50000) * 20))
mkdir -p "$slurm_dir/state" "$slurm_dir/spool" "$slurm_dir/tmp"
cat >"$slurm_dir/slurm.conf" <<CONF
ClusterName=pfctest
FirstJobId=$first_job_id
SlurmctldHost=$slurm_host(127.0.0.1)
SlurmctldPort=$slurm_port
SlurmdPort=$((slurm_port + 1))
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire: how long a requeued job waits before it may start again (120 s by default).
AuthInfo=socket=$slurm_dir/munge/socket,cred_expire=10
StateSaveLocation=$slurm_dir/state
SlurmdSpoolDir=$slurm_dir/spool
# The pmix plugin makes each step's folder (spmix_appdir_UID_JOB.STEP) under TmpFS; every
# private cluster numbers its jobs from 1, so a shared /tmp would collide with a folder an
# earlier cluster left behind.
TmpFS=$slurm_dir/tmp
SlurmctldPidFile=$slurm_dir/slurmctld.pid
SlurmdPidFile=$slurm_dir/slurmd.pid
SlurmctldLogFile=$slurm_dir/slurmctld.log
SlurmdLogFile=$slurm_dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
# Pending jobs (a requeued one past its begin time) are looked at every second, not every 60.
SchedulerParameters=sched_interval=1
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=$slurm_host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$slurm_dir/slurm.conf
# The job scripts launch with srun --mpi=pmix, as on clusters; OpenMPI's ranks need it.
grep -qw pmix <<<"$(srun --mpi=list 2>&1)" ||
  { echo "skip: srun offers no pmix (slurm-wlm's mpi_pmix plugin)"; exit 77; }
sed -i 's/^MpiDefault=none$/MpiDefault=pmix/' "$SLURM_CONF"

for _ in $(seq 50); do [[ -S $slurm_dir/munge/socket ]] && break; sleep 0.1; done
slurmctld -D -i >"$slurm_dir/slurmctld.out" 2>&1 &
slurm_pids+=($!)
slurmd -D -N localhost >"$slurm_dir/slurmd.out" 2>&1 &
slurm_pids+=($!)

slurm_node_state=
for _ in $(seq 60); do
  slurm_node_state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
  [[ $slurm_node_state == idle* ]] && break
  sleep 1
done
[[ $slurm_node_state == idle* ]] ||
  { echo "FAIL: the local node did not become idle (state '$slurm_node_state')"; exit 1; }
echo "slurm up: node localhost $slurm_node_state"

# wait_job JOB [SECONDS]: waits (150 s unless told) until JOB has ended; prints its final state.
wait_job() {
  local state=
  for _ in $(seq "${2:-150}"); do
    state=$(scontrol show job "$1" -o 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL) break ;;
    esac
    sleep 1
  done
  echo "$state"
}
