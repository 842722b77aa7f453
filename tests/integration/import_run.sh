#!/usr/bin/env bash
# A pfc run as a starting point, without PyTorch (its model.pt and ONNX files:
# import_torch.sh): `pfc import RUN NEW --config CFG` makes NEW a run whose step 0 holds RUN's
# backbone exactly (and new class centres for CFG's num_classes), which pfc export reads;
# pretrained = RUN starts a run on another class count from it and says so in its log; and the
# refusals are messages with exit code 2 that change nothing: an import into a folder that holds
# a run, a pretrained backbone of another network (naming the first tensor that differs, no
# metrics.h5 written), pretrained with resume_from, a path that does not exist.
set -uo pipefail
. "$(dirname "$0")/run_support.sh"

train() {  # train OUTPUT ARGS...
  local output=$1
  shift
  "$PFC" train input/smoke.toml --set output=\"$output\" --set frequent=1 "$@" \
    >"$output.log" 2>&1 || { cat "$output.log"; fail "pfc train $output"; }
}
train "$work/a" --set steps=2

expect_exit 0 import "into $work/b" -- "$PFC" import "$work/a" "$work/b" \
  --config input/smoke.toml --set num_classes=50
"$python" - "$work/a/ckpt/step_0000002/model.h5" "$work/b/ckpt/step_0000000/model.h5" <<'PY' ||
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:])
for group in ("backbone/parameters", "backbone/buffers"):
    assert sorted(a[group]) == sorted(b[group]), group
    for name in a[group]:
        assert np.array_equal(a[group][name][:], b[group][name][:]), name
assert b["state"].attrs["step"] == 0 and b["state"].attrs["num_classes"] == 50
assert b["pfc/weight"].shape == (50, 32), b["pfc/weight"].shape
assert not np.any(b["backbone/momentum/conv1.weight"][:]), "a fresh optimiser"
print(f"import: the run's backbone ({len(a['backbone/parameters'])} parameters) at step 0, "
      f"50 new class centres")
PY
  fail "the imported step 0 is not the run's backbone"
expect_exit 0 export "exported" -- "$PFC" export "$work/b" "$work/b.onnx"

train "$work/tuned" --set steps=1 --set num_classes=30 --set pretrained=\"$work/a\"
grep -q "pretrained: the backbone of checkpoint '$work/a/ckpt/step_0000002'" "$work/tuned.log" ||
  fail "the pretrained run does not log its backbone"
grep -q "new class centres for 30 classes" "$work/tuned.log" ||
  fail "the pretrained run does not say its class centres are new"

"$python" "$here/inspect_run.py" digest "$work/a" >"$work/a.digest"
expect_exit 2 into_a_run "already holds a run" -- "$PFC" import "$work/b" "$work/a" \
  --config input/smoke.toml
expect_exit 2 other_network "does not hold the network" \
  "parameter 'conv1.weight' is [8, 3, 3, 3] there, [16, 3, 3, 3]" -- \
  "$PFC" train input/smoke.toml --set widths=[16,16,16,32] --set pretrained=\"$work/a\" \
  --set output=\"$work/other\"
[ ! -e "$work/other/metrics.h5" ] || fail "a refused pretrained backbone left a metrics.h5"
expect_exit 2 with_resume_from "set one of them" -- "$PFC" train input/smoke.toml \
  --set pretrained=\"$work/a\" --set resume_from=\"$work/a\" --set output=\"$work/both\"
expect_exit 2 missing "$work/nothing.pt' does not exist" -- "$PFC" import "$work/nothing.pt" \
  "$work/c" --config input/smoke.toml
cmp -s "$work/a.digest" <("$python" "$here/inspect_run.py" digest "$work/a") ||
  fail "a refused import changed the run it was pointed at"

[ $failures -eq 0 ]
