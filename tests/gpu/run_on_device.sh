#!/usr/bin/env bash
# The GPU machine's check of an installed pfc: the gpu-labelled tests, a training run on cuda
# against the CPU backend, the headline benchmarks, the golden check, the largest classifier
# that fits, and the emulated benchmark sweep, with a short table beside the PyTorch figures
# of SPEC.md.
#
#   tests/gpu/run_on_device.sh OUTDIR
#
# It needs only the installed tree (PFC_DIST, default ./dist: `cmake --install build --prefix
# dist`), not the build tree. OUTDIR receives three files, whatever happens (a failed step, the
# budget spent, SIGTERM): preflight.txt (written in the first seconds: the OS, what the
# executables load, the machine's libraries, the GPUs, the library folders chosen),
# summary.txt (the tables; also printed last) and logs.tar.gz (every step's log and run folder,
# gtest's XML reports) — the GPU machine returns at most 8 files of 16 MiB, two folders deep.
# Steps write into a scratch folder that is packed at the end.
#
# The plan runs what decides whether the rest is worth running first (the gpu tests, the
# cuda-vs-cpu training losses: when both fail, the GPU steps after them are skipped), then the
# headline benchmarks, then golden and the rest. Each step has a limit (LIMIT below); the
# limits add up to less than the budget (PFC_DEVICE_BUDGET_S, default 520 s, less
# PACK_RESERVE_S for packing), and a step whose limit no longer fits in what is left is
# skipped, never started short. The sweep comes last and gets what the steps before it did
# not use.
#
# Variables:
#   PFC_DIST             the installed tree (default ./dist)
#   PFC_DEVICE_BUDGET_S  seconds for the whole script (default 520)
#   PFC_DEVICE_STEPS     run only these steps (names as in LIMIT), e.g. to rerun what failed
#   PFC_DEVICE_PART      "sweep": only the emulated sweep, with the whole budget
#   PFC_DEVICE_LIB_DIRS  folders to consider, before the usual ones, for newer CUDA libraries
#   PFC_DEVICE_SYSTEM_LIB_DIRS  the system's library folders (default /usr/lib/x86_64-linux-gnu
#                        /usr/local/cuda/lib64 /usr/local/cuda/lib)
#   PFC_DEVICE_PYTHON_ROOT  where a Python environment's CUDA packages are looked for
#                        (ROOT/.venv/lib/python3*/site-packages/nvidia/*/lib; default /opt/torch)
#   PFC_BENCH_SETS       overrides added to every benchmark run, e.g. "--set data_workers=8"
#
# On the GPU machine, from the repository root, with dist built and carried along (it must
# stay under the 64 MiB the checkout may take; tests/gpu/README.md has the measured sizes):
#   cmake -S . -B build-device -DPFC_ONEDNN=OFF -DCMAKE_CUDA_ARCHITECTURES=90 &&
#     cmake --build build-device --target pfc pfc_gpu_tests &&
#     cmake --install build-device --prefix dist --strip  # where pfc is built (tests/gpu/README.md)
#   tests/gpu/run_on_device.sh "$OUT"            # carry ["dist"], timeout_s 600
# and, for a rerun of what was red: PFC_DEVICE_STEPS="gpu_tests_cudnn bench_pfc_3m" ... likewise.
set -u -o pipefail

OUTDIR=${1:?usage: tests/gpu/run_on_device.sh OUTDIR}
mkdir -p "$OUTDIR" && OUTDIR=$(cd "$OUTDIR" && pwd)
BUDGET_S=${PFC_DEVICE_BUDGET_S:-520}
PACK_RESERVE_S=10
ARCHIVE_LIMIT_BYTES=$((15 * 1024 * 1024))  # under the 16 MiB a returned file may have

STEPS=()  # "step|limit|seconds|result"
ROWS=()   # "case|samples/s|GiB ours/device|PyTorch samples/s|PyTorch GiB"
NOTES=()  # lines for the summary's end
FAILED=0

# ---- the plan: step -> limit in seconds ------------------------------------------------
declare -A LIMIT=()
ORDER=()
plan() { ORDER+=("$1"); LIMIT[$1]=$2; }
plan nvidia_smi 5
plan pfc_info 10
plan gpu_tests_kernels 25
plan gpu_tests_cudnn 65
plan gpu_large_gemm 15
plan train_cpu 10
plan train_cuda 20
plan train_cuda_fp16 20
plan bench_backbone 35
plan bench_mp_3m 45
plan bench_pfc_3m 50
plan bench_vit_t 20
plan golden_fp32_tiny 15
plan golden_fp16_tiny 15
plan golden_fp32_r50 20
plan golden_fp16_r50 20
plan golden_parity_fp32 30
plan golden_semantics_fp32 20
plan bench_pfc_16m 30
plan bench_pfc_29m_f16 30
plan planned 10
plan sweep 0  # 0: what is left

read -r -a WANTED <<<"${PFC_DEVICE_STEPS:-}"
if [[ ${PFC_DEVICE_PART:-} == sweep ]]; then WANTED=(pfc_info sweep); fi
for step in "${WANTED[@]}"; do
  if [[ -z ${LIMIT[$step]+set} ]]; then
    echo "run_on_device: unknown step '$step' in PFC_DEVICE_STEPS; the steps: ${ORDER[*]}"
    exit 2
  fi
done
selected() {
  ((${#WANTED[@]} == 0)) && return 0
  local w
  for w in "${WANTED[@]}"; do [[ $w == "$1" ]] && return 0; done
  return 1
}
PLANNED_S=0
for step in "${ORDER[@]}"; do selected "$step" && PLANNED_S=$((PLANNED_S + LIMIT[$step])); done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pfc-device.XXXXXX")

# ---- the end: summary and archive, however the script stops -----------------------------
write_summary() {
  {
    echo "pfc device check, $(date -u +%Y-%m-%dT%H:%M:%SZ), ${GPU_NAME:-no GPU visible}"
    echo "plan: step limits add up to ${PLANNED_S}s + ${PACK_RESERVE_S}s for packing," \
      "of a ${BUDGET_S}s budget; ${SECONDS}s used"
    echo
    echo "step | limit (s) | took (s) | result"
    local s
    for s in "${STEPS[@]}"; do echo "${s//|/ | }"; done
    if ((${#ROWS[@]})); then
      echo
      echo "case | samples/s | GiB (our tensors / on the device) | PyTorch samples/s | PyTorch GiB"
      for s in "${ROWS[@]}"; do echo "${s//|/ | }"; done
      echo
      echo "(r50, batch 128, fp16, one GPU, world size 1; GiB = 2^30 bytes, read with" \
        "\`pfc report --csv\`; PyTorch figures from SPEC.md)"
    fi
    for s in "${NOTES[@]}"; do echo "$s"; done
  } >"$OUTDIR/summary.txt"
  cp "$OUTDIR/summary.txt" "$WORK/summary.txt"
}

pack_logs() {
  local archive=$OUTDIR/logs.tar.gz
  tar -C "$WORK" -czf "$archive" . 2>/dev/null
  if (($(stat -c %s "$archive") > ARCHIVE_LIMIT_BYTES)); then
    tar -C "$WORK" -czf "$archive" --exclude='*.h5' . 2>/dev/null
    echo "logs.tar.gz: too large with the HDF5 files; packed without them" >>"$OUTDIR/summary.txt"
  fi
}

finish() {
  local rc=$?
  trap - EXIT TERM INT
  # Every command still running in the background, not only the step's: a stop that comes
  # between a step's start and the note of its pid would leave that one running on.
  local running
  running=$(jobs -p)
  if [[ -n $running ]]; then
    # Waited for even when kill fails: one of them may have ended since it was listed.
    kill -TERM $running 2>/dev/null
    wait 2>/dev/null
  fi
  ((rc > 128)) && NOTES+=("stopped by signal $((rc - 128)) after ${SECONDS}s")
  # The pre-flight comes back whatever happened, in the output folder and in the archive.
  [[ -f $OUTDIR/preflight.txt ]] ||
    echo "pfc device pre-flight: the script stopped before it (see summary.txt)" \
      >"$OUTDIR/preflight.txt"
  ((rc > 128)) && echo "(stopped by signal $((rc - 128)) after ${SECONDS}s)" \
    >>"$OUTDIR/preflight.txt"
  cp "$OUTDIR/preflight.txt" "$WORK/preflight.txt"
  write_summary
  pack_logs
  rm -rf "$WORK"
  echo
  cat "$OUTDIR/summary.txt"
  echo "(logs: $OUTDIR/logs.tar.gz)"
  if ((rc == 0 && FAILED)); then rc=1; fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# await PID: PID's status once it has ended, waited for in slices of a tenth of a second. Once,
# on a loaded machine, a stop during the pre-flight was taken only when its step's 5 s limit
# ended it, as if bash held the signal through the `wait` it was entering. Between slices a
# signal that has come is acted on at once (its trap runs when the slice's sleep ends).
await() {
  while kill -0 "$1" 2>/dev/null; do sleep 0.1; done
  wait "$1"
}

# ---- running a step ------------------------------------------------------------------
LAST_TOOK=0
# run_step NAME CMD...: CMD into WORK/NAME.log under the step's limit (0: what is left).
# Returns CMD's status, 124 on timeout, 125 when its limit no longer fits the budget.
run_step() {
  local name=$1 limit=${LIMIT[$1]}
  shift
  local left=$((BUDGET_S - PACK_RESERVE_S - SECONDS))
  ((limit == 0)) && limit=$left
  LAST_TOOK=0
  if ((limit > left || limit <= 0)); then
    echo "skipped: a ${limit}s limit does not fit the ${left}s left of the budget" \
      >"$WORK/$name.log"
    echo "== $name: skipped (budget)"
    return 125
  fi
  echo "== $name (limit ${limit}s): $*"
  local start=$SECONDS rc
  timeout --kill-after=3 "$limit" "$@" >"$WORK/$name.log" 2>&1 &
  await $!
  rc=$?
  LAST_TOOK=$((SECONDS - start))
  echo "   rc $rc after ${LAST_TOOK}s"
  return "$rc"
}

verdict() {  # verdict RC
  case $1 in
    0) echo PASS ;;
    124 | 137) echo "FAIL (timeout)" ;;
    125) echo "SKIPPED (budget)" ;;
    *) echo "FAIL (rc $1)" ;;
  esac
}

# record NAME RESULT: a line of the step table; FAIL makes the script's status 1.
record() {
  [[ $2 == FAIL* ]] && FAILED=1
  local limit=${LIMIT[$1]}
  ((limit == 0)) && limit=rest
  STEPS+=("$1|$limit|$LAST_TOOK|$2")
}

# run_inline NAME FUNCTION: a step made of shell code (quick, so without a limit).
run_inline() {
  echo "== $1"
  local start=$SECONDS rc
  "$2" >"$WORK/$1.log" 2>&1
  rc=$?
  LAST_TOOK=$((SECONDS - start))
  return "$rc"
}

# gpu_step NAME: false (and the step recorded as skipped) when there is no GPU, when the first
# steps showed that the GPU runs nothing (NO_GO says why), or the step was not selected.
NO_GO=""
gpu_step() {
  selected "$1" || return 1
  local why=""
  ((GPUS == 0)) && why="no GPU visible"
  [[ -z $why && -n $NO_GO ]] && why=$NO_GO
  if [[ -n $why ]]; then
    LAST_TOOK=0
    record "$1" "SKIPPED ($why)"
    return 1
  fi
  return 0
}

# ---- the installed tree ---------------------------------------------------------------------
DIST=${PFC_DIST:-dist}
BIN=$DIST/bin
if [[ ! -x $BIN/pfc ]]; then
  NOTES+=("no installed pfc at $DIST/bin/pfc: see tests/gpu/README.md, \"The device call\"")
  FAILED=1
  exit 2
fi
DIST=$(cd "$DIST" && pwd)
BIN=$DIST/bin
GOLDEN=$DIST/share/pfc/golden/iresnet_arcface_torch_f64.h5
PARITY=$DIST/share/pfc/golden/arcface_torch_parity_f64.h5
SEED=$DIST/share/pfc/golden/arcface_torch_seed_f64.h5
INPUT=$DIST/share/pfc/input

# The machine runs commands as root; pfc and pfc_gpu_tests start MPI as singletons, which must
# not need Open MPI's orted: the machine has the MPI library but maybe not its executables.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 \
  OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_ess_singleton_isolated=1
# NCCL's own account of a failed start goes into the step's log.
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
# The tree carries the HDF5 pfc was built with (cmake/Install.cmake), found first below; should
# another release be loaded all the same, HDF5 1.10 would abort at the first file opened (its
# header/library release check): this turns that abort into a warning in the step's log.
export HDF5_DISABLE_VERSION_CHECK=1

# ---- the libraries ---------------------------------------------------------------------------
# $DIST/lib goes first: the loader searches LD_LIBRARY_PATH before the executables' RUNPATH,
# and a shipped library's own dependencies (HDF5's libsz, libaec) only there. Then the folders
# chosen for cuDNN, cuBLAS and NCCL, then the system's.
read -r -a SYSTEM_LIB_DIRS <<<"${PFC_DEVICE_SYSTEM_LIB_DIRS:-/usr/lib/x86_64-linux-gnu \
/usr/local/cuda/lib64 /usr/local/cuda/lib}"
PYTHON_ROOT=${PFC_DEVICE_PYTHON_ROOT:-/opt/torch}
joined() { local IFS=:; echo "$*"; }
SYSTEM_PATH=$(joined "${SYSTEM_LIB_DIRS[@]}")
ORIGINAL_LIBRARY_PATH=${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH=$DIST/lib:$SYSTEM_PATH$ORIGINAL_LIBRARY_PATH
CHOSEN_DIRS=()

# bounded SECONDS CMD...: CMD under a limit, in the background so that a stop signal is taken
# at once (bash runs a trap only after the foreground command ends).
bounded() {
  local limit=$1
  shift
  timeout --kill-after=2 "$limit" "$@" &
  await $!
}

# candidate_dirs: where cuDNN, cuBLAS and NCCL may be: PFC_DEVICE_LIB_DIRS, the Python packages'
# copies (the H200's PyTorch carries a newer cuDNN than its system), the system's folders.
candidate_dirs() {
  local dirs=() d
  read -r -a dirs <<<"${PFC_DEVICE_LIB_DIRS:-}"
  for d in "${dirs[@]}" "$PYTHON_ROOT"/.venv/lib/python3*/site-packages/nvidia/*/lib \
    "${SYSTEM_LIB_DIRS[@]}"; do
    [[ -d $d ]] && echo "$d"
  done
}

# pick_libraries: for cuDNN, cuBLAS and NCCL, the folder holding the newest copy of the
# library pfc links (its soname), as pfc itself reads the version. Each candidate is probed
# first on the path and every other candidate after it, so that pfc loads when the other
# libraries are elsewhere (cuDNN and NCCL each in a Python package of its own). Prints the
# folders; says on stderr what each probe read.
pick_libraries() {
  local dirs=() d name soname best best_version version newest others
  mapfile -t dirs < <(candidate_dirs)
  while read -r name soname; do
    best="" best_version=""
    for d in "${dirs[@]}"; do
      [[ -e $d/$soname ]] || continue
      others=$(printf '%s\n' "${dirs[@]}" | grep -vxF -- "$d" | paste -sd: -)
      # </dev/null: pfc must not read the list this loop reads.
      version=$(LD_LIBRARY_PATH=$DIST/lib:$d${others:+:$others}$ORIGINAL_LIBRARY_PATH \
        timeout 10 "$BIN/pfc" info </dev/null 2>/dev/null |
        sed -n "s/^$name: built with [^,]*, running \([0-9.]*\).*/\1/p")
      echo "$name in $d: ${version:-unreadable}" >&2
      [[ -z $version ]] && continue
      newest=$(printf '%s\n%s\n' "${best_version:-0}" "$version" | sort -V | tail -n 1)
      if [[ -z $best_version || ($version != "$best_version" && $newest == "$version") ]]; then
        best=$d best_version=$version
      fi
    done
    [[ -n $best ]] && echo "$best"
  done < <(ldd "$BIN/pfc" 2>/dev/null | awk '
    $1 ~ /^libcudnn\.so/ { print "cuDNN", $1 }
    $1 ~ /^libcublas\.so/ { print "cuBLAS", $1 }
    $1 ~ /^libnccl\.so/ { print "NCCL", $1 }')
}

# choose_libraries: LD_LIBRARY_PATH with the chosen folders after $DIST/lib.
choose_libraries() {
  local d path=""
  mapfile -t CHOSEN_DIRS < <(pick_libraries 2>>"$WORK/library_probes.log")
  for d in "${CHOSEN_DIRS[@]}"; do [[ :$path: == *:$d:* ]] || path=${path:+$path:}$d; done
  export LD_LIBRARY_PATH=$DIST/lib${path:+:$path}:$SYSTEM_PATH$ORIGINAL_LIBRARY_PATH
}

# The pre-flight, in the script's first seconds and before anything that may hang for long:
# what the machine is and what the executables would load, in OUTDIR/preflight.txt (returned
# whatever happens next, also when the script is stopped during it), so that a first call that
# fails still says what to ship.
PREFLIGHT=$OUTDIR/preflight.txt
preflight_section() {  # preflight_section TITLE SECONDS CMD...: CMD's output, bounded
  local title=$1 limit=$2
  shift 2
  echo "== $title" >>"$PREFLIGHT"
  bounded "$limit" "$@" >>"$PREFLIGHT" 2>&1 || echo "(exit $?)" >>"$PREFLIGHT"
}
ldd_both() {  # ldd_both WHEN
  local exe
  for exe in "$BIN/pfc" "$BIN/pfc_gpu_tests"; do
    if [[ -x $exe ]]; then
      preflight_section "ldd $exe ($1)" 10 ldd "$exe"
    else
      echo "== $exe: missing" >>"$PREFLIGHT"
    fi
  done
}
ldconfig_lines() {
  echo "== ldconfig -p: mpi, hdf5, openblas, cudnn, cublas, nccl" >>"$PREFLIGHT"
  bounded 10 ldconfig -p >"$WORK/ldconfig.txt" 2>&1 || echo "(exit $?)" >>"$PREFLIGHT"
  grep -E 'mpi|hdf5|openblas|cudnn|cublas|nccl' "$WORK/ldconfig.txt" >>"$PREFLIGHT"
}
{
  echo "pfc device pre-flight, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -srm)"
  echo "HDF5_DISABLE_VERSION_CHECK=1 (a second guard: the tree ships the HDF5 pfc was built with)"
  echo "LD_LIBRARY_PATH before the choice: $LD_LIBRARY_PATH"
} >"$PREFLIGHT"
NOTES+=("HDF5_DISABLE_VERSION_CHECK=1 set: an HDF5 release other than the shipped one warns"\
" instead of aborting")
preflight_section /etc/os-release 2 cat /etc/os-release
ldd_both "before the library choice"
ldconfig_lines
preflight_section "nvidia-smi -L" 5 nvidia-smi -L
choose_libraries
{
  echo "== library folders chosen: ${CHOSEN_DIRS[*]:-(none)}"
  cat "$WORK/library_probes.log" 2>/dev/null
  echo "LD_LIBRARY_PATH: $LD_LIBRARY_PATH"
} >>"$PREFLIGHT"
ldd_both "with the chosen folders"

# Only now, with the library path as the steps will have it: what cannot be found.
for exe in "$BIN/pfc" "$BIN/pfc_gpu_tests"; do
  if [[ ! -x $exe ]]; then
    NOTES+=("$exe: missing from $DIST/bin")
    FAILED=1
  elif ldd "$exe" 2>&1 | grep "not found" >"$WORK/ldd_missing.log"; then
    NOTES+=("$exe cannot find: $(sed 's/^[[:space:]]*//' "$WORK/ldd_missing.log" | paste -sd' ')")
    grep -q libdnnl "$WORK/ldd_missing.log" &&
      NOTES+=("the tree for this machine is built with -DPFC_ONEDNN=OFF (tests/gpu/README.md)")
    FAILED=1
  fi
done

if selected nvidia_smi; then
  if command -v nvidia-smi >/dev/null; then
    run_step nvidia_smi nvidia-smi
    record nvidia_smi "$(verdict $?)"
  else
    record nvidia_smi "SKIPPED (no nvidia-smi)"
  fi
fi

library_info() {
  echo "library path chosen: ${CHOSEN_DIRS[*]:-(the default)}"
  cat "$WORK/library_probes.log" 2>/dev/null
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  timeout 10 "$BIN/pfc" info </dev/null
}

if selected pfc_info; then
  run_inline pfc_info library_info
  rc=$?
  record pfc_info "$(verdict $rc)"
  cat "$WORK/pfc_info.log"
  NOTES+=("" "libraries (pfc info):")
  while read -r line; do NOTES+=("  $line"); done < <(grep -E "^(CUDA|cuBLAS|cuDNN|NCCL)|chosen" \
    "$WORK/pfc_info.log")
fi
GPUS=$(timeout 10 "$BIN/pfc" info 2>/dev/null </dev/null |
  sed -n 's/^visible GPUs: \([0-9]*\)$/\1/p')
GPUS=${GPUS:-0}
if ((GPUS > 0)) && command -v nvidia-smi >/dev/null; then
  GPU_NAME=$(timeout 5 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
fi

# ---- gpu-labelled tests ----------------------------------------------------------------------
# In three calls, each writing gtest's XML report into the archive: first the kernels that need
# no cuDNN (PartialFC, stored values, batch-norm, elementwise, norm, copy/cast, GEMM, NCCL,
# launch errors, the arena), so that a timeout in the cuDNN half still reports them test by
# test; then the rest; then the GEMM past 2^31 elements (4 GiB of f16), alone.
KERNEL_TESTS="*GpuPartialFc*:*GpuStoredValues*:*GpuBatchNorm*:*GpuElementwise*:*GpuDataMovement*"
KERNEL_TESTS+=":*GpuNorm*:*GpuCopyCast*:*GpuGemm*:*NcclComm*:*GpuLaunchErrors*:*DeviceArena*"
KERNEL_TESTS+=":*CudaLibraryVersions*"
LARGE_GEMM_TESTS="GpuLargeGemm.*"
gpu_tests_passed=""
gpu_tests() {  # gpu_tests STEP FILTER
  gpu_step "$1" || return 0
  run_step "$1" "$BIN/pfc_gpu_tests" --gtest_color=no "--gtest_filter=$2" \
    "--gtest_output=xml:$WORK/$1.xml"
  local rc=$? log=$WORK/$1.log passed
  count() {
    local n
    n=$(sed -n "s/^\[  $1 *\] \([0-9]*\) tests*[.,].*/\1/p" "$log" | tail -n 1)
    echo "${n:-0}"
  }
  passed=$(count PASSED)
  gpu_tests_passed=$((${gpu_tests_passed:-0} + passed))
  record "$1" "$(verdict $rc) ($passed passed, $(count SKIPPED) skipped, $(count FAILED) failed)"
  while read -r line; do NOTES+=("gpu test failed: $line"); done < <(sed -n \
    's/^\[  FAILED  \] \([A-Za-z][^ ,]*\).*/\1/p' "$log" | sort -u)
}
gpu_tests gpu_tests_kernels "$KERNEL_TESTS"
gpu_tests gpu_tests_cudnn "-$KERNEL_TESTS:$LARGE_GEMM_TESTS"
gpu_tests gpu_large_gemm "$LARGE_GEMM_TESTS"

# ---- reading a run's figures with pfc ------------------------------------------------------
# run_figures RUN_DIR: "STATUS SAMPLES_PER_S PEAK_GIB DEVICE_GIB NEEDED_GIB AVAILABLE_GIB" from
# `pfc report --format csv` (GB there are 10^9 bytes); nothing when the run left no metrics.
run_figures() {
  [[ -f $1/metrics.h5 ]] || return 0
  timeout 20 "$BIN/pfc" report --format csv "$1" 2>/dev/null </dev/null | awk '
    function split_csv(line, out,   n, i, c, field, quoted) {
      n = 0; field = ""; quoted = 0
      for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (quoted) {
          if (c != "\"") field = field c
          else if (substr(line, i + 1, 1) == "\"") { field = field c; i++ }
          else quoted = 0
        } else if (c == "\"") quoted = 1
        else if (c == ",") { out[++n] = field; field = "" }
        else field = field c
      }
      out[++n] = field
      return n
    }
    function gib(gb) { return gb == "" ? "?" : sprintf("%.2f", gb * 1e9 / 2^30) }
    NR == 1 { n = split_csv($0, name); for (i = 1; i <= n; i++) col[name[i]] = i; next }
    {
      split_csv($0, f)
      if (f[col["status"]] == "missing") next
      sps = f[col["samples_per_s"]]
      print f[col["status"]], (sps == "" ? "?" : sps), gib(f[col["mem_peak_gb"]]),
        gib(f[col["mem_device_gb"]]), gib(f[col["mem_needed_gb"]]),
        gib(f[col["mem_available_gb"]])
      exit
    }'
}

# add_row CASE RC RUN_DIR TORCH_SPS TORCH_GIB: a line of the benchmark table; sets RESULT to
# ok, oom (the run ran out of memory), nofit (pfc train's memory check refused it before it
# started: exit 2, no metrics.h5, the need in the step's log) or fail.
RESULT=""
RUN_STATUS=""
add_row() {
  local name=$1 rc=$2 dir=$3 status sps peak device needed available refusal
  read -r status sps peak device needed available <<<"$(run_figures "$dir")"
  RUN_STATUS=${status:-no metrics}
  refusal=$(sed -n 's/.*this run does not fit: it \([^;]*\);.*/\1/p' "$WORK/$name.log" \
    2>/dev/null | head -n 1)
  if [[ ${status:-} == out_of_memory ]]; then
    RESULT=oom
    ROWS+=("$name|OOM (needs $needed GiB, $available free)|-|$4|$5")
  elif ((rc == 2)) && [[ -n $refusal ]]; then
    RESULT=nofit
    RUN_STATUS="does not fit"
    ROWS+=("$name|does not fit: $refusal|-|$4|$5")
  elif ((rc == 0)) && [[ ${status:-} == ok ]]; then
    RESULT=ok
    ROWS+=("$name|$sps|$peak/$device|$4|$5")
  else
    RESULT=fail
    ROWS+=("$name|$(verdict "$rc")${sps:+, last $sps}|-|$4|$5")
  fi
}

# ---- the training path on cuda against the CPU backend ------------------------------------
# input/smoke.toml (tiny network, PFC 0.5, f32) for 20 steps on each backend: same seed, same
# synthetic batches and class draws, so their losses agree to f32 rounding carried through 20
# steps (relative 1e-3); then cuda in fp16, which must print 20 finite losses.
train_smoke() {  # train_smoke STEP DEVICE FP16
  run_step "$1" "$BIN/pfc" train "$INPUT/smoke.toml" --set "device=\"$2\"" --set "fp16=$3" \
    --set frequent=1 --set checkpoint_every=-1 --set "output=\"$WORK/$1\""
}
losses() { sed -n 's/.*Loss \([^ ]*\) .*/\1/p' "$WORK/$1.log"; }
finite_losses() { losses "$1" | grep -cE '^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$'; }

rc_cpu=126
if selected train_cpu; then
  train_smoke train_cpu cpu false
  rc_cpu=$?
  n=$(finite_losses train_cpu)
  if ((rc_cpu == 0 && n != 20)); then rc_cpu=3; fi
  record train_cpu "$(verdict $rc_cpu)$( ((rc_cpu == 125)) || echo " ($n of 20 losses)")"
  add_row "smoke, tiny, cpu f32" "$rc_cpu" "$WORK/train_cpu" "-" "-"
fi
rc_cuda=126
if gpu_step train_cuda; then
  train_smoke train_cuda cuda false
  rc=$?
  rc_cuda=$rc
  if ((rc != 0)); then
    record train_cuda "$(verdict $rc)"
  elif ((rc_cpu != 0)); then
    record train_cuda "FAIL (no CPU losses to compare with)"
  else
    record train_cuda "$(paste <(losses train_cpu) <(losses train_cuda) |
      awk '{ n++; d = ($1 - $2) / ($1 > 1e-12 ? $1 : 1e-12); d = d < 0 ? -d : d
             if (d > worst || $2 != $2 + 0) worst = ($2 == $2 + 0 ? d : 1e9) }
           END { v = (n == 20 && worst <= 1e-3) ? "PASS" : "FAIL"
                 printf "%s (%d steps, largest relative loss difference vs cpu %.2e)", v, n,
                   worst }')"
  fi
  add_row "smoke, tiny, cuda f32" "$rc" "$WORK/train_cuda" "-" "-"
fi
if gpu_step train_cuda_fp16; then
  train_smoke train_cuda_fp16 cuda true
  rc=$?
  n=$(finite_losses train_cuda_fp16)
  if ((rc == 0 && n != 20)); then rc=3; fi
  record train_cuda_fp16 "$(verdict $rc)$( ((rc == 125)) || echo " ($n of 20 finite losses)")"
fi
# Nothing later is worth its minutes when no GPU test passed and the cuda training run failed.
if [[ $gpu_tests_passed == 0 ]] && ((rc_cuda != 0 && rc_cuda != 126)); then
  NO_GO="no GPU test passed and the cuda training run failed"
fi
tail -n 2 "$WORK"/train_*.log 2>/dev/null

# ---- benchmarks -----------------------------------------------------------------------------
read -r -a BENCH_SETS <<<"${PFC_BENCH_SETS:-}"
# bench STEP TORCH_SPS TORCH_GIB CONFIG [--set ...]: r50, batch 128, fp16 on cuda.
bench() {
  local name=$1 torch_sps=$2 torch_gib=$3 config=$4
  shift 4
  gpu_step "$name" || { RESULT=skipped; return; }
  run_step "$name" "$BIN/pfc" train "$INPUT/$config" --set 'device="cuda"' --set frequent=10 \
    --set checkpoint_every=-1 --set "output=\"$WORK/$name\"" "$@" "${BENCH_SETS[@]}"
  local rc=$?
  add_row "$name" "$rc" "$WORK/$name" "$torch_sps" "$torch_gib"
  case $RESULT in
    ok) record "$name" PASS ;;
    oom) record "$name" "PASS (out of memory)" ;;
    nofit) record "$name" "PASS (does not fit: refused before the run)" ;;
    *) if ((rc == 0)); then record "$name" "FAIL (run status: $RUN_STATUS)"
       else record "$name" "$(verdict "$rc")"; fi ;;
  esac
}

# The backbone alone has no config of its own: MP with 1000 classes stands in for it (the
# classifier then costs well under 1% of the step). Its PyTorch figures are channels_last,
# the layout closest to our NHWC.
bench bench_backbone "3203 (channels_last)" "5.2" base.toml \
  --set 'method="mp"' --set sample_rate=1.0 --set num_classes=1000 --set steps=40
bench bench_mp_3m "770" "45.0" 3millions.toml --set steps=40
bench bench_pfc_3m "1201 (1444 channels_last)" "23.7 (32.9 on device)" 3millions_pfc.toml \
  --set steps=40
# vit_t as the backbone cell measures r50 (MP, 1000 classes, batch 128, fp16); SPEC.md holds no
# PyTorch figure for it.
bench bench_vit_t "-" "-" base.toml --set 'network="vit_t"' --set 'method="mp"' \
  --set sample_rate=1.0 --set num_classes=1000 --set steps=30

# ---- golden check, fp32 then fp16 ------------------------------------------------------------
# Against the f64 reference file, by each precision's rule (`pfc golden --help`): fp32 (TF32
# off) at least as exact as arcface_torch's own fp32 on the H200, fp16 within 1e-2 of exact.
for precision in fp32 fp16; do
  for group in tiny r50; do
    name=golden_${precision}_$group
    gpu_step "$name" || continue
    if [[ -f $GOLDEN ]]; then
      run_step "$name" "$BIN/pfc" golden "$GOLDEN" --case "$group/arcface_sr1" --device cuda \
        --precision "$precision"
      rc=$?
    else
      echo "golden file $GOLDEN was not installed" >"$WORK/$name.log"
      rc=2
    fi
    record "$name" "$(verdict $rc)"
    tail -n 4 "$WORK/$name.log"
  done
done

# arcface_torch's training semantics in fp32 on cuda: SGD, AdamW and accumulated steps through
# the trainer's own step, inter-class filtering, and MobileFaceNet's grouped convolutions
# through cuDNN (tests/integration/golden_parity.sh and golden_backbone.sh on the CPU).
if gpu_step golden_parity_fp32; then
  if [[ -f $PARITY ]]; then
    run_step golden_parity_fp32 "$BIN/pfc" golden "$PARITY" --case tiny/sgd_2steps \
      --case tiny/adamw_2steps --case tiny/sgd_acc2 --case tiny/arcface_filter0.1_sr1 \
      --case mbf/arcface_sr1 --device cuda --precision fp32
    rc=$?
  else
    echo "golden file $PARITY was not installed" >"$WORK/golden_parity_fp32.log"
    rc=2
  fi
  record golden_parity_fp32 "$(verdict $rc)"
  tail -n 4 "$WORK/golden_parity_fp32.log"
fi

# The seed's arcface_torch on cuda, several steps at sample rate 0.1 in fp32: its sampled
# update with the exact margin gradient (tests/integration/golden_semantics.sh checks it and
# today's dense file on the CPU; the dense update's kernels have their GPU twin tests).
if gpu_step golden_semantics_fp32; then
  if [[ -f $SEED ]]; then
    run_step golden_semantics_fp32 "$BIN/pfc" golden "$SEED" \
      --case tiny/seed_arcface_sr0.1_3steps --device cuda --precision fp32
    rc=$?
  else
    echo "golden file $SEED was not installed" >"$WORK/golden_semantics_fp32.log"
    rc=2
  fi
  record golden_semantics_fp32 "$(verdict $rc)"
  tail -n 4 "$WORK/golden_semantics_fp32.log"
fi

# ---- the largest classifier that fits (PyTorch: out of memory at 16M) ----------------------
# memory_check = false: what these measure is whether the run fits the GPU (the arena's own
# out-of-memory), not whether the plan says so before it starts; `planned` below sets the
# plan beside each. A refusal all the same is reported as one, not as a failure. 16M with f32
# class centres, then the seed's largest cell, 29M (eight V100s there), on this one GPU with
# the centres and their momentum in f16 (`pfc plan --max-classes` says how far each goes).
bench bench_pfc_16m "out of memory" "> 139" 3millions_pfc.toml \
  --set num_classes=16000000 --set steps=20 --set memory_check=false
bench bench_pfc_29m_f16 "out of memory" "> 139" 3millions_pfc.toml \
  --set num_classes=29000000 --set 'classifier_storage="f16"' --set steps=20 \
  --set memory_check=false

# ---- planned against measured -----------------------------------------------------------------
# Every run above planned (pfc plan of its own metrics.h5, on an H200; a cpu run for the CPU)
# beside what it measured, GiB: pfc's tensors (the arena's or the CPU ledger's peak) against the
# plan's need (its exact peak from the meta run's ledger, plus for cuda the modelled cuBLAS and
# cuDNN workspaces and kernel scratch), and the whole device (adding metrics.h5
# device_overhead_bytes) against the plan's total (adding the modelled CUDA context), so that
# the constants of plan/device_overhead_model.cpp can be replaced by these measurements.
planned_vs_measured() {
  local dir name log status sps peak device p_status p_sps p_peak p_device need names=()
  # The plans at once (a few seconds each, one core each), then their lines in order.
  for dir in "$WORK"/*/; do
    dir=${dir%/}
    name=$(basename "$dir")
    [[ -f $dir/metrics.h5 && $name != planned_* ]] || continue
    names+=("$name")
    timeout "${LIMIT[planned]}" "$BIN/pfc" plan "$dir/metrics.h5" --gpu h200 \
      --set "output=\"$WORK/planned_$name\"" </dev/null >"$WORK/planned_$name.log" 2>&1 &
  done
  wait
  for name in "${names[@]}"; do
    log=$WORK/planned_$name.log
    if [[ ! -f $WORK/planned_$name/plan/metrics.h5 ]]; then
      echo "$name | plan failed: $(tail -n 1 "$log")"
      continue
    fi
    read -r status sps peak device _ <<<"$(run_figures "$WORK/$name")"
    read -r p_status p_sps p_peak p_device _ <<<"$(run_figures "$WORK/planned_$name/plan")"
    need=$(sed -n 's/^  \(fits\|does not fit\): needs \([0-9.]*\) GiB.*/\2/p' "$log")
    echo "$name | $peak | $need (exact $p_peak) | $device | $p_device"
  done
}
if selected planned; then
  if ((BUDGET_S - PACK_RESERVE_S - SECONDS < LIMIT[planned])); then
    record planned "SKIPPED (budget)"
  else
    run_inline planned planned_vs_measured
    record planned "$(verdict $?)"
    header="planned against measured, GiB (case | pfc's tensors measured | planned need"
    NOTES+=("" "$header (exact) | device total measured | planned):")
    while IFS= read -r line; do NOTES+=("  $line"); done <"$WORK/planned.log"
  fi
fi

# ---- the emulated sweep: every benchmark cell as rank 0 of 8, in what is left --------------
if gpu_step sweep; then
  left=$((BUDGET_S - PACK_RESERVE_S - SECONDS))
  if ((left < 60)); then
    LAST_TOOK=0
    record sweep "SKIPPED (budget: ${left}s left)"
  else
    run_step sweep env PFC_BIN="$BIN/pfc" PFC_SWEEP_BUDGET_S=$((left - 15)) \
      "$DIST/share/pfc/jobs/emulated_sweep.sh" "$WORK/sweep"
    rc=$?
    record sweep "$(verdict $rc)"
    NOTES+=("" "emulated sweep (rank 0 of 8 on this GPU):")
    while IFS= read -r line; do NOTES+=("$line"); done < <(timeout 20 "$BIN/pfc" report \
      "$WORK/sweep" 2>/dev/null </dev/null)
  fi
fi
exit 0
