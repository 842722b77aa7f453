#!/usr/bin/env bash
# The GPU machine's check of an installed pfc, run from the repository root with the tree
# installed in ./dist (`cmake --install build --prefix dist`); full logs go to OUTDIR.
#
#   tests/gpu/run_on_device.sh OUTDIR
#
# Steps, each under `timeout` and logged to OUTDIR/<step>.log: nvidia-smi; the gpu-labelled
# tests (pfc_gpu_tests); a small training run on cuda against the CPU backend (f32) and in
# fp16; the golden check in fp32 and fp16 on tiny and r50; the benchmark
# cases (r50, batch 128, fp16, world size 1, synthetic data); then a table beside the
# PyTorch figures of SPEC.md. A failing step is marked in the table and the rest still run.
# The whole script keeps to PFC_DEVICE_BUDGET_S seconds (default 450): a step that no longer
# fits is shortened or skipped. PFC_DEVICE_PART=sweep runs the emulated benchmark sweep instead.
set -u -o pipefail

OUTDIR=${1:?usage: tests/gpu/run_on_device.sh OUTDIR}
mkdir -p "$OUTDIR"
BUDGET_S=${PFC_DEVICE_BUDGET_S:-450}
BIN=dist/bin
GOLDEN=dist/share/pfc/golden/iresnet_arcface_torch.h5
INPUT=dist/share/pfc/input

# cuDNN and NCCL live in /usr/lib/x86_64-linux-gnu there, ahead of any other copy.
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# The machine runs commands as root; pfc starts MPI as a singleton.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 \
       OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export PYTHONUNBUFFERED=1

STEPS=()   # "step|result"
ROWS=()    # "case|samples/s|GiB ours/device|PyTorch samples/s|PyTorch GiB"

echo "== libraries the installed programs cannot find (none is good)"
for exe in "$BIN/pfc" "$BIN/pfc_gpu_tests"; do
  if [[ -x $exe ]]; then
    missing=$(ldd "$exe" 2>&1 | grep "not found")
    echo "$exe: ${missing:-all found}" | tee -a "$OUTDIR/ldd.log"
  else
    echo "$exe: missing from dist/" | tee -a "$OUTDIR/ldd.log"
  fi
done

# run_step NAME LIMIT_S CMD...: runs CMD into OUTDIR/NAME.log within the time left.
run_step() {
  local name=$1 limit=$2
  shift 2
  local left=$((BUDGET_S - SECONDS))
  if ((left < 15)); then
    echo "skipped: the time budget of ${BUDGET_S}s is spent" >"$OUTDIR/$name.log"
    echo "== $name: SKIPPED (time budget)"
    return 125
  fi
  ((limit > left)) && limit=$left
  echo "== $name (limit ${limit}s): $*"
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$OUTDIR/$name.log" 2>&1
  local rc=$?
  echo "   rc $rc after $((SECONDS - start))s"
  return $rc
}

verdict() {  # verdict RC
  case $1 in
    0) echo PASS ;;
    124 | 137) echo "FAIL (timeout)" ;;
    125) echo "SKIPPED (time budget)" ;;
    *) echo "FAIL (rc $1)" ;;
  esac
}

# ---- 1. the device ----------------------------------------------------------------------
run_step nvidia-smi 20 nvidia-smi
STEPS+=("nvidia-smi|$(verdict $?)")

# PFC_DEVICE_PART=sweep: instead of the checks below, every cell of the benchmark tables
# emulated as rank 0 of an 8-GPU node (jobs/emulated_sweep.sh), then `pfc report`'s tables.
if [[ ${PFC_DEVICE_PART:-checks} == sweep ]]; then
  PFC_BIN=$PWD/$BIN/pfc PFC_SWEEP_BUDGET_S=$((BUDGET_S - SECONDS - 10)) \
    jobs/emulated_sweep.sh "$OUTDIR/sweep" 2>&1 | tee "$OUTDIR/sweep.log" | tail -n 60
  exit "${PIPESTATUS[0]}"
fi

# ---- 2. gpu-labelled tests ---------------------------------------------------------------
run_step gpu_tests 100 "$BIN/pfc_gpu_tests" --gtest_color=no
rc=$?
STEPS+=("gpu tests|$(verdict $rc)")
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUTDIR/gpu_tests.log" | head -40

# ---- 2b. the whole training path on cuda against the CPU backend ---------------------------
# input/smoke.toml (tiny network, PFC 0.5, f32) for 20 steps on each backend: same seed, same
# synthetic batches and class draws, so the losses they print must agree to f32 rounding
# carried through 20 steps (relative 1e-3); then cuda in fp16, which must train to the end
# with finite losses.
smoke() {  # smoke NAME DEVICE FP16
  run_step "$1" 60 "$BIN/pfc" train "$INPUT/smoke.toml" --set "device=\"$2\"" --set "fp16=$3" \
    --set frequent=1 --set checkpoint_every=-1 --set "output=\"$OUTDIR/$1\""
}
losses() { sed -n 's/.*Loss \([^ ]*\) .*/\1/p' "$OUTDIR/$1.log"; }
smoke train_smoke_cpu cpu false
rc_cpu=$?
smoke train_smoke_cuda cuda false
rc_cuda=$?
if ((rc_cpu != 0 || rc_cuda != 0)); then
  STEPS+=("train cuda vs cpu (f32)|FAIL (rc cpu $rc_cpu, cuda $rc_cuda)")
else
  STEPS+=("train cuda vs cpu (f32)|$(paste <(losses train_smoke_cpu) <(losses train_smoke_cuda) |
    awk '{ n++; d = ($1 - $2) / ($1 > 1e-12 ? $1 : 1e-12); d = d < 0 ? -d : d;
           if (d > worst) worst = d }
         END { v = (n == 20 && worst <= 1e-3) ? "PASS" : "FAIL";
               printf "%s (%d steps, largest relative loss difference %.2e)", v, n, worst }')")
fi
smoke train_smoke_cuda_fp16 cuda true
rc=$?
if ((rc == 0)) && losses train_smoke_cuda_fp16 | grep -qiv '^[0-9.]*$'; then rc=3; fi
STEPS+=("train cuda fp16|$(verdict $rc)")
tail -n 3 "$OUTDIR"/train_smoke_*.log

# ---- 3. golden check, fp32 then fp16 -------------------------------------------------------
# tiny at the precision's tolerance; r50 in fp32 at 5e-3: arcface_torch's own fp32 values lie
# up to 2.7e-3 from exact arithmetic there (tests/integration/golden_backbone.sh).
for precision in fp32 fp16; do
  for group in tiny r50; do
    name=golden_${precision}_$group
    tolerance=()
    [[ $precision == fp32 && $group == r50 ]] && tolerance=(--tolerance 5e-3)
    if [[ -f $GOLDEN ]]; then
      run_step "$name" 40 "$BIN/pfc" golden "$GOLDEN" --case "$group/arcface_sr1" --device cuda \
        --precision "$precision" "${tolerance[@]}"
      rc=$?
    else
      echo "golden file $GOLDEN was not installed" >"$OUTDIR/$name.log"
      rc=2
    fi
    STEPS+=("golden $precision $group|$(verdict $rc)")
    tail -n 12 "$OUTDIR/$name.log"
  done
done

# ---- 4. benchmarks --------------------------------------------------------------------------
h5_attribute() {  # h5_attribute FILE NAME: the value of /summary's attribute NAME
  h5dump -a "/summary/$2" "$1" 2>/dev/null | grep -oE '\(0\): [-0-9.eE+]+' | awk '{print $2}'
}

# Prints "samples/s peak_GiB/device_GiB" from OUTDIR/<case>/metrics.h5 (/summary attributes:
# pfc's own peak, and that plus the CUDA context, libraries and NCCL), or the last speed of
# the log when the file cannot be read.
read_metrics() {
  local h5="$1/metrics.h5" log=$2 figures=""
  if [[ -f $h5 ]] && python3 -c "import h5py" 2>/dev/null; then
    figures=$(python3 - "$h5" 2>/dev/null <<'PY'
import sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    a = f["summary"].attrs
    peak = float(a["mem_peak_bytes"])
    device = peak + float(a.get("device_overhead_bytes", 0))
    print(f"{float(a['samples_per_s']):.1f} {peak / 2**30:.2f}/{device / 2**30:.2f}")
PY
    )
  fi
  if [[ -z $figures && -f $h5 ]] && command -v h5dump >/dev/null; then
    local s p o
    s=$(h5_attribute "$h5" samples_per_s)
    p=$(h5_attribute "$h5" mem_peak_bytes)
    o=$(h5_attribute "$h5" device_overhead_bytes)
    if [[ -n $s && -n $p ]]; then
      figures=$(awk -v s="$s" -v p="$p" -v o="${o:-0}" \
        'BEGIN { printf "%.1f %.2f/%.2f", s, p / 2^30, (p + o) / 2^30 }')
    fi
  fi
  if [[ -z $figures ]]; then
    local s
    s=$(grep -oE 'Speed +[0-9.]+ samples/sec' "$log" | tail -n 1 | awk '{print $2}')
    figures="${s:-?} ?"
  fi
  echo "$figures"
}

# Overrides added to every benchmark run, e.g. PFC_BENCH_SETS="--set data_workers=8".
read -r -a BENCH_SETS <<<"${PFC_BENCH_SETS:-}"
LAST_RESULT=""
# bench CASE LIMIT_S TORCH_SPS TORCH_GIB CONFIG [--set ...]
bench() {
  local name=$1 limit=$2 torch_sps=$3 torch_gib=$4 config=$5
  shift 5
  local out="$OUTDIR/$name"
  run_step "$name" "$limit" "$BIN/pfc" train "$INPUT/$config" --set 'device="cuda"' \
    --set frequent=10 --set checkpoint_every=-1 --set "output=\"$out\"" "$@" "${BENCH_SETS[@]}"
  local rc=$?
  local sps gib="-"
  if grep -q -E "device memory: need|out of memory" "$OUTDIR/$name.log"; then
    sps="OOM"
  elif ((rc == 0)); then
    read -r sps gib <<<"$(read_metrics "$out" "$OUTDIR/$name.log")"
  else
    sps=$(verdict $rc)
  fi
  LAST_RESULT=$sps
  ROWS+=("$name|$sps|$gib|$torch_sps|$torch_gib")
}

# The backbone alone has no config of its own: MP with 1000 classes stands in for it (the
# classifier then costs well under 1% of the step). Its PyTorch figures are channels_last,
# the layout closest to our NHWC.
bench backbone_mp1k 50 "3203 (channels_last)" "5.2" base.toml \
  --set 'method="mp"' --set sample_rate=1.0 --set num_classes=1000 --set steps=40
bench mp_125k 50 "1987" "6.6" base.toml \
  --set 'method="mp"' --set sample_rate=1.0 --set num_classes=125000 --set steps=40
bench mp_3m 60 "770" "45.0" 3millions.toml --set steps=40
bench pfc0.1_3m 60 "1201 (1444 channels_last)" "23.7 (32.9 on device)" 3millions_pfc.toml \
  --set steps=40
# The largest classifier that fits: stop at the first that does not.
for classes in 16000000 24000000 32000000; do
  bench "pfc0.1_$((classes / 1000000))m" 75 "out of memory" "> 139" 3millions_pfc.toml \
    --set num_classes=$classes --set steps=20
  [[ $LAST_RESULT == OOM || $LAST_RESULT == FAIL* || $LAST_RESULT == SKIPPED* ]] && break
done

# ---- 5. the tables ----------------------------------------------------------------------------
{
  echo
  echo "step | result"
  for s in "${STEPS[@]}"; do echo "$s" | sed 's/|/ | /g'; done
  echo
  echo "case | samples/s | GiB (our tensors / on the device) | PyTorch samples/s | PyTorch GiB"
  for r in "${ROWS[@]}"; do echo "$r" | sed 's/|/ | /g'; done
  echo
  echo "(r50, batch 128, fp16, one H200, world size 1; PyTorch figures from SPEC.md;" \
    "${SECONDS}s in all)"
} | tee "$OUTDIR/summary.txt"

# ---- 6. planned against measured ----------------------------------------------------------------
# Each benchmark case planned (pfc plan of the run's own metrics.h5, on an H200) beside what it
# measured, in GiB: the arena's peak against the plan's need in the arena (pfc's tensors, exact,
# plus the modelled cuBLAS and cuDNN workspaces and kernel scratch), and the device memory
# outside the arena (metrics.h5 device_overhead_bytes) against the plan's modelled terms beside
# it (CUDA context; plan/device_overhead_model.cpp), so that those constants can be replaced by
# these measurements. Self-contained: it needs only OUTDIR/<case>/metrics.h5 and pfc.
planned_vs_measured() {
  local gib=1073741824
  echo
  echo "case | arena peak measured | planned (exact + workspaces) | outside the arena measured |" \
    "planned (modelled)"
  local h5 dir name csv plan_log peak device exact total need
  for h5 in "$OUTDIR"/*/metrics.h5; do
    [[ -f $h5 ]] || continue
    dir=$(dirname "$h5")
    name=$(basename "$dir")
    plan_log="$dir/plan.log"
    if ! "$BIN/pfc" plan "$h5" --gpu h200 --set "output=\"$dir/plan\"" >"$plan_log" 2>&1; then
      echo "$name | plan failed: $(tail -n 1 "$plan_log")"
      continue
    fi
    # pfc report's CSV: mem_peak_gb (column 6) and mem_device_gb (16), in 1e9 bytes.
    csv=$("$BIN/pfc" report "$h5" --format csv 2>/dev/null | awk -F, 'NR > 1 && $3 != "missing"')
    peak=$(awk -F, -v g=$gib '{ printf "%.2f", $6 * 1e9 / g }' <<<"$csv")
    device=$(awk -F, -v g=$gib '{ printf "%.2f", ($16 - $6) * 1e9 / g }' <<<"$csv")
    exact=$(sed -n 's/^ *peak of all together *\([0-9.]*\).*/\1/p' "$plan_log")
    total=$(sed -n 's/^  total *\([0-9.]*\).*/\1/p' "$plan_log")
    need=$(sed -n 's/^  \(fits\|does not fit\): needs \([0-9.]*\) GiB.*/\2/p' "$plan_log")
    echo "$name | ${peak:-?} | ${need:-?} (${exact:-?} exact) | ${device:-?} |" \
      "$(awk -v t="${total:-0}" -v n="${need:-0}" 'BEGIN { printf "%.2f", t - n }')"
  done
}
planned_vs_measured | tee -a "$OUTDIR/summary.txt"
