#!/usr/bin/env bash
# pfc plan and pfc train's memory check, end to end:
#  - the seed's 29M-identity PFC 0.1 cell (r50, batch 128, fp16) planned as rank 0 of 8 on a
#    V100: seconds of CPU and tens of MB of host memory, both measured here; it prints memory
#    by purpose with its share of the GPU, the step's arithmetic and the bound; metrics.h5 reads
#    as a run's;
#  - a cell that does not fit (DP at 29M) says "needs X GiB per rank, Y available", exit 0;
#  - pfc report over plans prints the speed-bound and memory tables and writes --markdown;
#  - a plan on 2 real ranks (MpiComm, the CPU backend planned) has both ranks' peaks, equal to
#    those the CPU run of the same config then records: the plan (in output/plan/) does not
#    stop `pfc train` into the same output, and a second plan leaves the run's metrics.h5 as it
#    was;
#  - a config with val_targets plans as one emulated rank (a plan verifies nothing);
#  - refusals, exit 2: a plan over a run's metrics.h5; pfc train with device = "meta"; runs that do
#    not fit the host on 2 ranks, before anything is written (a classifier no host holds, and
#    one whose plan needs more than any host has); INT64_MAX classes, named as an overflow.
#  - jobs/plan_sweep.sh over one row.
set -uo pipefail
cd "${PFC_SOURCE_DIR:?}"
. tests/integration/check_support.sh
export OPENBLAS_NUM_THREADS=1
have_h5py=1
/usr/bin/python3 -c "import h5py" 2>/dev/null || have_h5py=0

# Each step in at most 60 s (a plan takes seconds): one that hangs fails under its own name,
# exit 124, rather than as the whole test's timeout.
bounded() { timeout -k 5 60 "$@"; }

# ---- the 29M cell: time and host memory of the plan, measured from outside --------------------
# The plan's own host memory is its process's peak less that of `pfc --version` (the same
# executable and libraries, which a CUDA build maps at some 200 MB before doing anything).
/usr/bin/python3 - "$PFC" "$work/p29m" >"$work/p29m.log" 2>&1 <<'PY'
import resource, subprocess, sys, time
pfc, out = sys.argv[1], sys.argv[2]
def peak_kib():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
subprocess.run([pfc, "--version"], stdout=subprocess.DEVNULL, check=True)
base = peak_kib()
start = time.monotonic()
rc = subprocess.run([pfc, "plan", "input/base.toml", "--gpu", "v100", "--set", "method=pfc",
                     "--set", "sample_rate=0.1", "--set", "num_classes=29000000",
                     "--set", "emulate_world_size=8", "--set", f'output="{out}"'],
                    timeout=60).returncode
seconds = time.monotonic() - start
own_mb = (peak_kib() - base) / 1024
print(f"plan of the 29M cell: rc {rc}, {seconds:.1f} s, {own_mb:.0f} MB of host memory beyond "
      f"the executable's {base / 1024:.0f} MB")
sys.exit(rc)
PY
rc=$?
cat "$work/p29m.log"
[ "$rc" = 0 ] || fail "29M plan: rc $rc"
read -r seconds own <<<"$(sed -n 's/.*rc 0, \([0-9.]*\) s, \([0-9]*\) MB.*/\1 \2/p' "$work/p29m.log")"
awk -v s="${seconds:-999}" 'BEGIN { exit !(s < 60) }' || fail "29M plan took ${seconds}s (want seconds)"
[ "${own:-9999}" -lt 100 ] || fail "29M plan took ${own} MB of host memory (want tens of MB)"
for want in "plan: rank 0 of 8 (emulated), planning cuda on Tesla V100-SXM2-32GB" \
  "memory of rank 0 (GiB, and the share of 31.75 GiB)" "cudnn_workspace" "nccl_buffers" \
  "conv2d_forward" "step-time bound on Tesla V100-SXM2-32GB" "samples/s for 8 rank(s)"; do
  grep -qF "$want" "$work/p29m.log" || fail "29M plan output lacks '$want'"
done
grep -Eq "^  (fits|does not fit)" "$work/p29m.log" || fail "29M plan says nothing of its fit"

# ---- a cell that does not fit -------------------------------------------------------------------
bounded "$PFC" plan input/base.toml --gpu v100 --set method=dp --set num_classes=29000000 \
  --set emulate_world_size=8 --set "output=\"$work/dp29m\"" >"$work/dp29m.log" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "a plan that does not fit exits $rc, not 0"
grep -Eq "^  does not fit: needs [0-9.]+ GiB per rank, [0-9.]+ available" "$work/dp29m.log" ||
  { fail "DP 29M plan does not say what it needs"; cat "$work/dp29m.log"; }

# ---- pfc report over plans ---------------------------------------------------------------------
bounded "$PFC" report "$work/p29m" "$work/dp29m" --markdown "$work/report.md" \
  >"$work/report.txt" 2>&1 ||
  fail "pfc report over plans: rc $?"
cmp -s "$work/report.txt" "$work/report.md" || fail "--markdown wrote other text than printed"
grep -q "^## Speed bound" "$work/report.md" || fail "no speed-bound table"
grep -q "^## Training speed (samples" "$work/report.md" && fail "a measured-speed table for plans"
grep -Eq "^\| 29 000 000 \| OOM \(needs [0-9.]+ GB, [0-9.]+ available\) \| – \| – \| – \| [0-9.]+ \| 32.3 \|" \
  "$work/report.md" || { fail "memory row of 29M"; grep "29 000 000" "$work/report.md"; }
grep -q "2 run(s): 8 ranks planned for Tesla V100-SXM2-32GB" "$work/report.md" ||
  fail "the report does not name the plans' setup"

# ---- a plan on 2 real ranks, then the CPU run of the same config into the same output ---------
# (the README's order: the plan goes to run2/plan/, where it neither stops the run nor is lost)
smoke=(--set steps=2 --set frequent=1 --set checkpoint_every=-1 --set method=mp
       --set sample_rate=1.0 --set num_classes=1001)
bounded mpiexec -n 2 "$PFC" plan input/smoke.toml "${smoke[@]}" --set "output=\"$work/run2\"" \
  >"$work/plan2.log" 2>&1 || { fail "plan on 2 ranks"; cat "$work/plan2.log"; }
[ -f "$work/run2/plan/metrics.h5" ] && [ ! -e "$work/run2/metrics.h5" ] ||
  fail "the plan is not in run2/plan/metrics.h5 alone"
bounded mpiexec -n 2 "$PFC" train input/smoke.toml "${smoke[@]}" --set "output=\"$work/run2\"" \
  >"$work/run2.log" 2>&1 || { fail "CPU run on 2 ranks after its plan"; cat "$work/run2.log"; }
cp "$work/run2/metrics.h5" "$work/run2_metrics.h5"
bounded mpiexec -n 2 "$PFC" plan input/smoke.toml "${smoke[@]}" --set "output=\"$work/run2\"" \
  >"$work/plan2_again.log" 2>&1 ||
  { fail "a second plan beside the run"; cat "$work/plan2_again.log"; }
cmp -s "$work/run2/metrics.h5" "$work/run2_metrics.h5" || fail "a plan changed the run's metrics.h5"
grep -q "planning cpu (this host)" "$work/plan2.log" || fail "a cpu config is not planned for cpu"
grep -q "no step-time bound: no peak rates for a cpu plan" "$work/plan2.log" ||
  fail "a cpu plan claims a bound"

# ---- refusals -----------------------------------------------------------------------------------
expect_usage() {  # expect_usage NAME TEXT CMD...: exit 2 and TEXT in the output
  local name=$1 text=$2
  shift 2
  bounded "$@" >"$work/$name.log" 2>&1
  local rc=$?
  if [ "$rc" != 2 ] || ! grep -qF -- "$text" "$work/$name.log"; then
    fail "$name: rc $rc (want 2 and '$text')"
    cat "$work/$name.log"
  fi
}
# A run whose output was another's plan/ folder: a plan there would replace the run's file.
mkdir -p "$work/run_in_plan/plan" && cp "$work/run2/metrics.h5" "$work/run_in_plan/plan/"
expect_usage plan_into_run "belongs to a run" \
  "$PFC" plan input/smoke.toml --set "output=\"$work/run_in_plan\""
expect_usage train_meta "use \`pfc plan CONFIG\`" \
  "$PFC" train input/smoke.toml --set device=meta --set "output=\"$work/refused_meta\""
# Sizes beyond any host, so that no machine starts them: 1e10 classes (1.3 TB of centres and
# momentum per rank), refused before planning; and a shard that fits (1e7 classes) with
# logits of 16384 x 1e7 f32 (655 GB) that do not, refused by the plan itself.
start=$SECONDS
expect_usage too_big "GiB per rank" mpiexec -n 2 "$PFC" train input/smoke.toml \
  --set num_classes=10000000000 --set "output=\"$work/too_big\""
((SECONDS - start < 60)) || fail "refusing 1e10 classes took $((SECONDS - start))s"
[ ! -e "$work/too_big" ] || fail "a refused run wrote $work/too_big"
grep -q "available" "$work/too_big.log" || fail "the refusal does not say what is available"
expect_usage too_big_plan "this run does not fit: it needs" mpiexec -n 2 "$PFC" train \
  input/smoke.toml --set method=mp --set sample_rate=1.0 --set num_classes=20000000 \
  --set batch_size=8192 --set num_image=100000 --set "output=\"$work/too_big_plan\""
[ ! -e "$work/too_big_plan" ] || fail "a refused run wrote $work/too_big_plan"
expect_usage int64_classes "more than a 64-bit byte count holds" \
  "$PFC" train input/smoke.toml --set num_classes=9223372036854775807 \
  --set "output=\"$work/int64\""
expect_usage plan_gpu "--gpu" "$PFC" plan input/smoke.toml --gpu a100

# An arcface_torch config lists val_targets, which an emulated run refuses; a plan verifies
# nothing and plans it as one rank of 8 all the same.
sed 's/^val_targets = \[\]$/val_targets = ["lfw", "cfp_fp"]/' input/smoke.toml \
  >"$work/with_val_targets.toml"
grep -q '^val_targets = \["lfw"' "$work/with_val_targets.toml" || fail "no val_targets line"
bounded "$PFC" plan "$work/with_val_targets.toml" --set emulate_world_size=8 \
  --set "output=\"$work/plan_val_targets\"" >"$work/plan_val_targets.log" 2>&1 ||
  { fail "a plan of a config with val_targets: exit $?"; cat "$work/plan_val_targets.log"; }

# ---- the sweep over one row ----------------------------------------------------------------------
PFC_BIN=$PFC PFC_PLAN_ROWS=row_0125k PFC_PLAN_WORLDS=8 PFC_MAX_GPU= \
  bounded jobs/plan_sweep.sh "$work/sweep" >"$work/sweep.log" 2>&1 ||
  { fail "plan_sweep"; cat "$work/sweep.log"; }
grep -Eq "^\| 125 000 \| [0-9.]+ \| 7.4 \| [0-9.]+ \| 5.3 \| [0-9.]+ \| 4.9 \|" "$work/sweep/w8/report.md" ||
  { fail "the sweep's memory row"; cat "$work/sweep/w8/report.md"; }

if ((have_h5py)); then
  /usr/bin/python3 - "$work" <<'PY' || fail "metrics.h5 of plans"
import math, sys, h5py
work = sys.argv[1]
def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)
p = h5py.File(f"{work}/p29m/plan/metrics.h5", "r")
assert text(p.attrs["device"]) == "meta", p.attrs["device"]
assert p.attrs["world_size"] == 8 and p.attrs["emulated"] == 1
assert text(p["plan"].attrs["plan_for"]) == "cuda"
assert p["plan"].attrs["samples_per_s_bound"] > 0
assert p["summary"].attrs["mem_peak_bytes"] > 0 and p["summary"].attrs["device_overhead_bytes"] > 0
assert math.isnan(p["summary"].attrs["samples_per_s"]), "a plan measured a speed"
assert p["memory/peak_bytes_by_purpose"].shape == (1, 7)
names = text(p["plan/arithmetic"].attrs["primitives"]).split(",")
work_table = p["plan/arithmetic"][:]
tensor_flops = work_table[names.index("conv2d_forward"), 1]
# r50 forward at 112x112 is 6.3 GMAC per image (SPEC.md): 128 images, 2 FLOPs per MAC.
assert abs(tensor_flops / (128 * 2 * 6.3e9) - 1) < 0.05, tensor_flops
d = h5py.File(f"{work}/dp29m/plan/metrics.h5", "r")
assert text(d["summary"].attrs["status"]) == "out_of_memory"
assert d["summary"].attrs["mem_needed_bytes"] > d["summary"].attrs["mem_available_bytes"] > 0
run = h5py.File(f"{work}/run2/metrics.h5", "r")["memory/peak_bytes_by_purpose"][:]
plan = h5py.File(f"{work}/run2/plan/metrics.h5", "r")["memory/peak_bytes_by_purpose"][:]
assert run.shape == (2, 7) and (run == plan).all(), ("real 2-rank run vs its plan", run, plan)
print("plans' metrics ok")
PY
fi
[ "$failures" -eq 0 ]
