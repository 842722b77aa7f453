#!/usr/bin/env bash
# input/smoke.toml on 2 CPU ranks: the seed's log lines (with arcface_torch's additions),
# output/training.log appended to by a resume (resume = "auto"), metrics.h5 readable by h5py
# with a row per logged step, and a checkpoint whose /pfc/weight reads as one [classes, emb]
# matrix.
set -euo pipefail
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "${PFC_SOURCE_DIR:?}"
mpiexec -n 2 "$PFC" train input/smoke.toml --set output=\"$out/smoke\" | tee "$out/log"
grep -Eq "^Training: Speed [0-9.]+ samples/sec   Loss [0-9.]+   LearningRate [0-9.]+   Epoch: 0   Global Step: 20" "$out/log"
# arcface_torch's additions after the seed's fields: six decimals of learning rate, hours left.
grep -Eq "LearningRate 0\.[0-9]{6}   Epoch: 0   Global Step: 20   Required: [0-9]+ hours$" "$out/log"
[ "$(cat "$out/smoke/ckpt/latest")" = step_0000020 ]

# output/training.log: rank 0's messages and progress lines, dated; a resume appends to it.
log=$out/smoke/training.log
grep -q "\] info: pfc train: input/smoke.toml on 2 rank(s)" "$log"
[ "$(grep -c "info: Training: Speed" "$log")" -eq 4 ]
grep -q "info: checkpoint written: .*step_0000020" "$log"
first=$(cat "$log")
mpiexec -n 2 "$PFC" train input/smoke.toml --set output=\"$out/smoke\" --set resume=auto \
  --set steps=25 >"$out/log2" 2>&1
[ "$(head -c ${#first} "$log")" = "$first" ]  # the first run's lines are kept, in front
[ "$(grep -c "info: pfc train: " "$log")" -eq 2 ]
grep -q "resume = \"auto\": .* has a checkpoint; continuing the run" "$log"
grep -q "info: Training: Speed .* Global Step: 25 " "$log"
echo "training.log: both runs, $(wc -l <"$log") lines"
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
  /usr/bin/python3 - "$out/smoke" <<'PY'
import sys, h5py
run = sys.argv[1]
f = h5py.File(run + "/metrics.h5", "r")
s = f["steps"]
assert list(s["step"][:]) == [5, 10, 15, 20, 25], s["step"][:]
assert s["mem_peak_bytes"].shape == (5, 2)
assert f["summary"].attrs["status"] in ("ok", b"ok")
assert f.attrs["world_size"] == 2 and f.attrs["method"] in ("pfc", b"pfc")
m = h5py.File(run + "/ckpt/step_0000020/model.h5", "r")
assert m["pfc/weight"].shape == (1000, 32)
assert abs(m["pfc/weight"][:]).sum() > 0
print("metrics.h5 and checkpoint ok")
PY
fi
