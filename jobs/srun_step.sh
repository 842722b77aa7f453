# Sourced by the job scripts (train.sbatch, bench_row.sh): finds the pfc executable and runs
# one job step of it that Slurm's stop signals reach. After sourcing:
#   $pfc_bin          PFC_BIN, else pfc on PATH (the module), else the checkout's build/bin/pfc,
#                     else the installed <prefix>/bin/pfc beside <prefix>/share/pfc/jobs
#   run_step CMD...   runs CMD through the launcher and waits for it, however many signals
#                     arrive meanwhile; sets $step_status to its exit status
#   $stop_requested   1 once SIGUSR1 or SIGTERM reached this script
# The launcher is `srun --mpi=pmix --kill-on-bad-exit=1` (PFC_SRUN_MPI, PFC_SRUN_ARGS add to
# it), or PFC_LAUNCHER instead; outside a Slurm job, without PFC_LAUNCHER, the script stops
# with exit 2 saying so (srun could not start the ranks there). SIGUSR1 (Slurm's warning
# before the time limit, sent to the batch shell by --signal=B:USR1@…) is passed on to the
# step: srun hands it to every rank and the trainer stops at the next step boundary. SIGTERM
# is only noted: Slurm sends it to the step's ranks itself (scancel, preemption, the time
# limit), and a rank that got it twice would not wait for its checkpoint.

jobs_home=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pfc_bin=${PFC_BIN:-}
if [[ -z $pfc_bin ]]; then
  for candidate in "$(command -v pfc || true)" "$jobs_home/build/bin/pfc" \
                   "$jobs_home/../../bin/pfc"; do
    [[ -n $candidate && -x $candidate ]] && { pfc_bin=$candidate; break; }
  done
fi
[[ -x $pfc_bin ]] ||
  { echo "${0##*/}: no pfc executable (set PFC_BIN or load the pfc module)" >&2; exit 2; }

# Slurm >= 22.05 no longer passes sbatch's --cpus-per-task on to srun (sbatch(1)); without it
# each rank is bound to one CPU and its data_workers share it.
if [[ -n ${SLURM_CPUS_PER_TASK:-} && -z ${SRUN_CPUS_PER_TASK:-} ]]; then
  export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK
fi
# Each rank computes on OMP_NUM_THREADS threads (oneDNN's and pfc's CPU loops): one per CPU
# Slurm gave the task, unless the job says otherwise.
if [[ -n ${SLURM_CPUS_PER_TASK:-} && -z ${OMP_NUM_THREADS:-} ]]; then
  export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
fi

step_launcher=(srun --mpi="${PFC_SRUN_MPI:-pmix}" --kill-on-bad-exit=1)
read -r -a step_extra_args <<<"${PFC_SRUN_ARGS:-}"
step_launcher+=("${step_extra_args[@]}")
[[ -n ${PFC_LAUNCHER:-} ]] && read -r -a step_launcher <<<"$PFC_LAUNCHER"
if [[ -z ${PFC_LAUNCHER:-} && -z ${SLURM_JOB_ID:-} ]]; then
  echo "${0##*/}: not inside a Slurm job (no SLURM_JOB_ID), so srun cannot start the ranks:" \
    "submit it with sbatch, or set PFC_LAUNCHER to the command that starts them here," \
    "e.g. PFC_LAUNCHER=\"mpiexec -n 2\" bash $0 ... (jobs/README.md)" >&2
  exit 2
fi

stop_requested=0
step_child=
step_status=0
on_usr1() {
  stop_requested=1
  [[ -n $step_child ]] && kill -USR1 "$step_child" 2>/dev/null
}
trap on_usr1 USR1
trap 'stop_requested=1' TERM

run_step() {
  "${step_launcher[@]}" "$@" &
  step_child=$!
  # `wait` returns early when a trapped signal arrives; wait again until the step has ended.
  while :; do
    wait "$step_child"
    step_status=$?
    kill -0 "$step_child" 2>/dev/null || break
  done
  step_child=
}
