#!/usr/bin/env bash
# Emulated ranks (emulate_world_size) on the CPU with input/smoke.toml:
#  - one process as rank 3 of 8 trains DP, MP and PFC 0.1: metrics.h5 says emulated, world 8,
#    a modelled comm_time_s > 0 on every row, one memory column, no checkpoint; pfc report
#    prints the table;
#  - rank 1 of an emulated world of 2 has the same peak memory as rank 1 of a real 2-rank run
#    (the same buffers);
#  - emulation under several MPI ranks, or with resume, is refused naming the key;
#  - jobs/emulated_sweep.sh in its CPU smoke mode over two identity counts, and a cell stopped
#    before a timed step: not marked done, "not measured", measured by the next sweep.
set -euo pipefail
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "${PFC_SOURCE_DIR:?}"
export OPENBLAS_NUM_THREADS=1

emulate=(--set emulate_world_size=8 --set emulate_rank=3 --set steps=4 --set frequent=2)
for method in dp mp pfc; do
  rate=1.0
  [ "$method" = pfc ] && rate=0.1
  "$PFC" train input/smoke.toml "${emulate[@]}" --set method="$method" \
    --set sample_rate="$rate" --set "output=\"$out/emu/$method\"" | tee "$out/$method.log"
  grep -Eq "^Training: Speed [0-9.]+ samples/sec .*Global Step: 4" "$out/$method.log"
  [ ! -e "$out/emu/$method/ckpt" ] || { echo "an emulated run wrote a checkpoint"; exit 1; }
done

"$PFC" report "$out/emu" | tee "$out/report.txt"
grep -q "3 run(s): 8 ranks" "$out/report.txt"
grep -Eq "^\| 1 000 \| [0-9]+ \| – \| [0-9]+ \| – \| [0-9]+ \|" "$out/report.txt"

# Real 2-rank MP run and its emulated rank 1.
mpiexec -n 2 "$PFC" train input/smoke.toml --set method=mp --set sample_rate=1.0 --set steps=2 \
  --set frequent=2 --set checkpoint_every=-1 --set "output=\"$out/real2\"" >/dev/null
"$PFC" train input/smoke.toml --set method=mp --set sample_rate=1.0 --set steps=2 --set frequent=2 \
  --set emulate_world_size=2 --set emulate_rank=1 --set "output=\"$out/emu2\"" >/dev/null

# Refusals: exit code 2 and a message naming what to change.
set +e
mpiexec -n 2 "$PFC" train input/smoke.toml "${emulate[@]}" --set "output=\"$out/refused\"" \
  >"$out/refused.log" 2>&1
rc=$?
"$PFC" train input/smoke.toml "${emulate[@]}" --set resume=true --set "output=\"$out/refused2\"" \
  >"$out/refused2.log" 2>&1
rc2=$?
set -e
if [ "$rc" != 2 ] || ! grep -q "emulate_world_size" "$out/refused.log"; then
  echo "emulation on 2 MPI ranks: rc $rc"; cat "$out/refused.log"; exit 1
fi
if [ "$rc2" != 2 ] || ! grep -q "emulate_world_size" "$out/refused2.log"; then
  echo "emulation with resume: rc $rc2"; cat "$out/refused2.log"; exit 1
fi

# The sweep, on the CPU: the tiny network over two identity counts (DP, MP, PFC at 125 000;
# PFC at 250 000), then its report.
PFC_BIN=$PFC PFC_SMOKE=1 PFC_SWEEP_CELLS="row_0125k row_0250k/pfc" PFC_SWEEP_CELL_S=60 \
  jobs/emulated_sweep.sh "$out/sweep" | tee "$out/sweep.log"
grep -q "cell budget 60s" "$out/sweep.log"
grep -Eq "^\| 125 000 \| [0-9]+ \| 4681 \| [0-9]+ \| 4824 \| [0-9]+ \| 5004 \|" "$out/sweep.log"
grep -Eq "^\| 250 000 \| – \| 4047 \| – \| 4521 \| [0-9]+ \| 4976 \|" "$out/sweep.log"

# A cell stopped by its budget before a timed step (here: no row logged in 6 s) is not marked
# done, reads "not measured", and the next sweep into the same folder measures it.
PFC_BIN=$PFC PFC_SMOKE=1 PFC_SWEEP_CELLS="row_0250k/pfc" PFC_SWEEP_CELL_S=6 PFC_STEPS=0 \
  PFC_SET="frequent=100000 num_epoch=100000" jobs/emulated_sweep.sh "$out/resweep" \
  >"$out/resweep1.log" 2>&1 || { cat "$out/resweep1.log"; exit 1; }
grep -q "pfc stopped before a timed step: not measured" "$out/resweep1.log" ||
  { cat "$out/resweep1.log"; echo "the stopped cell was not reported as not measured"; exit 1; }
[ ! -e "$out/resweep/row_0250k/pfc/done" ] || { echo "a cell without figures was marked done"; exit 1; }
grep -Eq "^\| 250 000 \| – \| 4047 \| – \| 4521 \| not measured \| 4976 \|" "$out/resweep1.log" ||
  { cat "$out/resweep1.log"; echo "the report does not say 'not measured'"; exit 1; }
PFC_BIN=$PFC PFC_SMOKE=1 PFC_SWEEP_CELLS="row_0250k/pfc" PFC_SWEEP_CELL_S=60 \
  jobs/emulated_sweep.sh "$out/resweep" >"$out/resweep2.log" 2>&1 || { cat "$out/resweep2.log"; exit 1; }
[ "$(cat "$out/resweep/row_0250k/pfc/done")" = "exit 0" ] || { echo "the re-run was not done"; exit 1; }
grep -Eq "^\| 250 000 \| – \| 4047 \| – \| 4521 \| [0-9]+ \| 4976 \|" "$out/resweep2.log" ||
  { cat "$out/resweep2.log"; echo "the re-run cell has no figure"; exit 1; }
echo "sweep: a cell stopped before a timed step is measured on the next sweep"

if ! /usr/bin/python3 -c "import h5py" 2>/dev/null; then
  echo "h5py is missing: metrics.h5 contents not checked"
  exit 77
fi
/usr/bin/python3 - "$out" <<'PY'
import os, sys, h5py
out = sys.argv[1]

def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)

def check_emulated(path, world, method):
    f = h5py.File(path, "r")
    assert f.attrs["emulated"] == 1, path
    assert f.attrs["world_size"] == world, (path, f.attrs["world_size"])
    assert text(f.attrs["method"]) == method, (path, f.attrs["method"])
    assert text(f["summary"].attrs["status"]) == "ok", (path, f["summary"].attrs["status"])
    s = f["steps"]
    n = len(s["step"])
    assert n >= 2, (path, n)
    assert (s["comm_time_s"][:] > 0).all(), (path, s["comm_time_s"][:])
    assert f["summary"].attrs["comm_time_s"] > 0, path
    for name in ("step_time_s", "mem_in_use_bytes", "mem_peak_bytes"):
        assert s[name].shape == (n, 1), (path, name, s[name].shape)
    assert (s["mem_peak_bytes"][:] > 0).all(), path
    if "memory" in f:
        assert f["memory/peak_bytes_by_purpose"].shape[0] == 1, path
    return f

runs = {m: check_emulated(f"{out}/emu/{m}/metrics.h5", 8, m) for m in ("dp", "mp", "pfc")}
# DP holds every class, MP a shard of 1000 / 8, PFC samples a tenth of that shard.
peak = {m: int(f["summary"].attrs["mem_peak_bytes"]) for m, f in runs.items()}
assert peak["dp"] > peak["mp"] >= peak["pfc"], peak
comm = {m: float(f["summary"].attrs["comm_time_s"]) for m, f in runs.items()}

real = h5py.File(f"{out}/real2/metrics.h5", "r")["steps"]["mem_peak_bytes"][:]
emu = h5py.File(f"{out}/emu2/metrics.h5", "r")["steps"]["mem_peak_bytes"][:]
assert real.shape[1] == 2 and emu.shape[1] == 1, (real.shape, emu.shape)
assert (real[:, 1] == emu[:, 0]).all(), ("rank 1 real vs emulated peak bytes", real, emu)

cells = sorted(os.path.relpath(os.path.join(d, n), f"{out}/sweep")
               for d, _, files in os.walk(f"{out}/sweep") for n in files if n == "metrics.h5")
assert cells == ["row_0125k/dp/metrics.h5", "row_0125k/mp/metrics.h5",
                 "row_0125k/pfc/metrics.h5", "row_0250k/pfc/metrics.h5"], cells
for cell in cells:
    f = check_emulated(f"{out}/sweep/{cell}", 8, cell.split("/")[1])
    assert f.attrs["num_classes"] in (125000, 250000), cell
print("emulated runs ok:", peak, comm)
PY
