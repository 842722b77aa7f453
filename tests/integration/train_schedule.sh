#!/usr/bin/env bash
# `pfc train` on an imported arcface_torch config follows train_v2.py's learning rate step by
# step: PolynomialLRWarmup with power 1, so LearningRate at global step 1 is the full lr, then
# the warm-up from lr / warmup, then the linear decay. A tiny network for 48 steps (12 per
# epoch, warm-up 1 epoch, 4 epochs) at PFC 0.1 with uniform synthetic labels, on 1 and on 3
# ranks:
#  - every step's LearningRate line, and metrics.h5's lr bit for bit, are the rates torch's
#    scheduler gives (written out below from lr_scheduler.py's arithmetic, chained as torch
#    chains it);
#  - 17 steps, then a resume to the end, trains exactly as the straight run: the same loss and
#    rate at every step after the resume point (the schedule's counter, the data stream and
#    the class sampler's stream all continue where they stopped).
set -uo pipefail
. "$(dirname "$0")/run_support.sh"

mkdir -p "$work/configs"
printf 'from easydict import EasyDict as edict\nconfig = edict()\n' >"$work/configs/base.py"
cat >"$work/configs/tiny_v2.py" <<'PY'
from easydict import EasyDict as edict

config = edict()
config.network = "custom"
config.layers = [1, 1, 1, 1]
config.widths = [8, 16, 16, 32]
config.image_size = 32
config.embedding_size = 32
config.margin_list = (1.0, 0.5, 0.0)
config.sample_rate = 0.1
config.fp16 = False
config.optimizer = "sgd"
config.lr = 0.1
config.momentum = 0.9
config.weight_decay = 5e-4
config.batch_size = 4
config.rec = "synthetic"
config.synthetic_labels = "uniform"
config.num_classes = 200
config.num_epoch = 4
config.warmup_epoch = 1
config.frequent = 1
config.seed = 2048
config.verbose = 2000
config.val_targets = []
PY

train() {  # train RANKS OUTPUT ARGS...
  local ranks=$1 output=$2
  shift 2
  mpiexec -n "$ranks" "$PFC" train "$work/configs/tiny_v2.py" --set device=\"cpu\" \
    --set data_workers=1 --set output=\"$output\" "$@" >"$output.log" 2>&1 ||
    { tail -n 30 "$output.log"; fail "pfc train $output"; }
}

for ranks in 1 3; do
  # 12 global batches of 4 x ranks per epoch: 48 steps, the first 12 of them warm-up.
  images=$((48 * ranks))
  run=$work/r$ranks
  train "$ranks" "$run-straight" --set num_image=$images
  train "$ranks" "$run-split" --set num_image=$images --set steps=17
  train "$ranks" "$run-split" --set num_image=$images --set resume=true
  grep -q "lr_schedule polynomial_warmup (train_v2.py's PolynomialLRWarmup, power 1): step 1 at the base rate, warm-up 12 and 48 iterations in all" "$run-straight.log" ||
    fail "$ranks rank(s): the start-up log does not name train_v2.py's schedule"
  "$python" - "$run-straight.log" "$run-straight/metrics.h5" "$run-split/metrics.h5" <<'PY' ||
import re, sys
import h5py

log, straight, split = sys.argv[1:]
base, warmup, total = 0.1, 12, 48

# lr_scheduler.py's PolynomialLRWarmup as torch evaluates it: the rate after `count` scheduler
# steps, each step's factor applied to the previous rate.
rates, lr = [], base
for count in range(total):
    if count == 0 or count > total:
        pass
    elif count <= warmup:
        lr = base * count / warmup
    else:
        lr = lr * ((1.0 - (count - warmup) / (total - warmup)) /
                   (1.0 - (count - 1 - warmup) / (total - warmup))) ** 1.0
    rates.append(lr)

printed = {int(s): v for v, s in re.findall(r"LearningRate (\S+) .*Global Step: (\d+)",
                                             open(log).read())}
assert sorted(printed) == list(range(1, total + 1)), f"logged steps {sorted(printed)}"
for step, value in printed.items():
    assert value == f"{rates[step - 1]:.6f}", f"step {step}: LearningRate {value}, torch {rates[step - 1]:.6f}"
for path in (straight, split):
    with h5py.File(path, "r") as f:
        steps = f["steps"]["step"][:].tolist()
        lrs = f["steps"]["lr"][:].tolist()
    assert steps == list(range(1, total + 1)), f"{path}: steps {steps}"
    bad = [s for s, v in zip(steps, lrs) if v != rates[s - 1]]
    assert not bad, f"{path}: lr differs from torch's at steps {bad}"
with h5py.File(straight, "r") as a, h5py.File(split, "r") as b:
    la, lb = a["steps"]["loss"][:], b["steps"]["loss"][:]
    bad = [s + 1 for s in range(total) if la[s] != lb[s]]
    assert not bad, f"the resumed run's loss differs at steps {bad}"
print(f"LearningRate: step 1 {printed[1]}, 2 {printed[2]}, 13 {printed[13]}, "
      f"48 {printed[48]}; lr bit for bit torch's at all {total} steps; resume at 17: every "
      f"loss equal")
PY
    fail "$ranks rank(s): the rates or the resumed losses differ from train_v2.py's"
done

# The 3-rank run's checkpoint at step 17 resumed on 1 rank with the same global batch (12): the
# rates of steps 18..48 are the 3-rank run's, bit for bit.
train 3 "$work/r3-moved" --set num_image=144 --set steps=17
train 1 "$work/r3-moved" --set num_image=144 --set batch_size=12 --set resume=true
"$python" - "$work/r3-straight/metrics.h5" "$work/r3-moved/metrics.h5" <<'PY' ||
import sys
import h5py

with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    assert a["steps"]["step"][:].tolist() == b["steps"]["step"][:].tolist()
    assert a["steps"]["lr"][:].tolist() == b["steps"]["lr"][:].tolist()
print("resumed from 3 ranks on 1 (same global batch): every rate of the 3-rank run")
PY
  fail "a resume on another rank count changed the rates"
[ $failures -eq 0 ]
