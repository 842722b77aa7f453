#!/usr/bin/env bash
# One row of the seed's speed benchmark: trains DP, MP and PFC 0.1 in turn for one identity
# count on the job's allocation (`srun --mpi=pmix`), each writing
# ${PFC_BENCH_OUTPUT}/<row>/<method>/metrics.h5; `pfc report output/bench` builds the tables.
# Called by the row scripts (jobs/rows/*.sbatch, jobs/headline_*.sbatch) as
#   bench_row.sh ROW IDENTITIES [METHOD...]
# METHOD: dp, mp or pfc; by default those the seed ran (DP up to 1.4M identities, MP up to 5.5M,
# PFC always). A method that fails or does not fit is recorded (metrics.h5 says out_of_memory
# with what it needed) and the row goes on. On SIGUSR1 (Slurm's warning before the time limit,
# --signal=B:USR1@120) the running method stops cleanly (its metrics.h5 keeps its rows and
# summary) and the job requeues itself; methods already done are not run again, the stopped one
# starts over, and so does one that ended before a timed step (it has no figures to keep). No
# checkpoints: a benchmark's figures come from its own steady state, and the classifier of a
# 29M-identity row alone would checkpoint about 120 GB. The launch and the signal: srun_step.sh.
# Variables: see jobs/README.md.
set -uo pipefail

row=${1:?usage: bench_row.sh ROW IDENTITIES [METHOD...]}
identities=${2:?usage: bench_row.sh ROW IDENTITIES [METHOD...]}
shift 2
methods=("$@")
if ((${#methods[@]} == 0)); then
  read -r -a methods <<<"${PFC_METHODS:-}"
fi
if ((${#methods[@]} == 0)); then
  ((identities <= 1400000)) && methods+=(dp)
  ((identities <= 5500000)) && methods+=(mp)
  methods+=(pfc)
fi

# shellcheck source=srun_step.sh
source "$(dirname "${BASH_SOURCE[0]}")/srun_step.sh"
input_dir=$jobs_home/input
bench_output=${PFC_BENCH_OUTPUT:-${SLURM_SUBMIT_DIR:-$PWD}/output/bench}
sample_rate=${PFC_SAMPLE_RATE:-0.1}

if [[ ${PFC_SMOKE:-0} == 1 ]]; then
  # Seconds on CPUs: the tiny network of input/smoke.toml, few steps.
  config=${PFC_CONFIG:-$input_dir/smoke.toml}
  settings=(device=cpu steps="${PFC_STEPS:-4}" frequent=2 checkpoint_every=-1)
else
  # The seed's setup: r50, 128 per GPU, fp16, synthetic data; 200 steps is enough for a
  # steady median speed (metrics.h5 leaves out the first 20 % of the rows).
  config=${PFC_CONFIG:-$input_dir/base.toml}
  settings=(steps="${PFC_STEPS:-200}" frequent="${PFC_FREQUENT:-10}" checkpoint_every=-1)
fi
read -r -a extra_settings <<<"${PFC_SET:-}"

echo "bench_row: $row, $identities identities, methods ${methods[*]}, pfc $pfc_bin, config $config"
for method in "${methods[@]}"; do
  case $method in
    dp | mp) rate=1.0 ;;
    pfc) rate=$sample_rate ;;
    *) echo "bench_row: unknown method '$method' (dp, mp or pfc)" >&2; exit 2 ;;
  esac
  out=$bench_output/$row/$method
  if [[ -f $out/done ]]; then
    echo "bench_row: $method already done ($(cat "$out/done")); skipped"
    continue
  fi
  # A method without `done` was stopped before it finished (or never ran): it starts over, so
  # what the stopped attempt wrote goes first (pfc train refuses to start a new run in a
  # folder that holds another one).
  rm -rf "$out"
  mkdir -p "$out"
  run_step "$pfc_bin" train "$config" \
    --set method="$method" --set sample_rate="$rate" --set num_classes="$identities" \
    --set output="$out" "${settings[@]/#/--set=}" "${extra_settings[@]/#/--set=}"
  if ((stop_requested)); then
    echo "bench_row: stopped during $method before the time limit"
    break
  fi
  # Done once the cell has figures, or an end that has none (out of memory, a failure, a
  # non-zero exit); one that stopped cleanly before a step after its warm-up (its budget spent
  # on start-up) is run again.
  outcome=$("$pfc_bin" report "$out/metrics.h5" --format csv 2>/dev/null |
    awk -F, 'NR > 1 && $3 != "missing" { print $3 ($4 == "" ? "" : ",measured") }')
  case $step_status,$outcome in
    0,ok | 0,running | 0,)
      echo "bench_row: $method stopped before a timed step: not measured; it runs again" \
        "when the row does"
      continue
      ;;
  esac
  echo "exit $step_status" >"$out/done"
  echo "bench_row: $method finished with exit status $step_status ($out/metrics.h5)"
done

if ((stop_requested)); then
  if [[ -n ${SLURM_JOB_ID:-} && ${PFC_REQUEUE:-1} == 1 ]]; then
    echo "bench_row: requeueing job $SLURM_JOB_ID for the methods left"
    scontrol requeue "$SLURM_JOB_ID"
  fi
  exit 0
fi
echo "bench_row: $row done; tables: $pfc_bin report $bench_output"
