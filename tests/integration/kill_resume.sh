#!/usr/bin/env bash
# Property: a run killed with SIGKILL at random points, a random rank each time, and resumed
# (again and again) ends exactly as a run that was never killed: the same losses bit for bit
# in metrics.h5 (every step once, in order) and the same final checkpoint, with no staging
# folder left. Checkpoints come every 3 steps, so many kills land inside a checkpoint write;
# every third trial also kills a rank deterministically in the middle of writing its shard
# (PFC_FAULT at:checkpoint). PFC_KILL_TRIALS trials (default 5; the slow test runs 33),
# PFC_KILL_SEED to replay a sequence.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/run_support.sh"
trials=${PFC_KILL_TRIALS:-5}
seed=${PFC_KILL_SEED:-$((($(date +%s) + $$) % 32768))}
RANDOM=$seed
echo "seed $seed, $trials trials"
steps=24
settings=(--set steps=$steps --set frequent=1 --set checkpoint_every=3 --set keep_checkpoints=2)

mpiexec -n 2 "$PFC" train input/smoke.toml "${settings[@]}" --set output=\"$work/straight\" \
  >"$work/straight.log" 2>&1 || { fail "the uninterrupted run failed"; exit 1; }

# rank_pid OUTPUT RANK: the process of that rank of the run writing OUTPUT.
rank_pid() {
  local pid
  for pid in $(pgrep -f -- "output=\"$1\""); do
    grep -qx "OMPI_COMM_WORLD_RANK=$2" <<<"$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null)" &&
      echo "$pid"
  done
}

total_kills=0
mid_write=0  # kills that left a half-written checkpoint behind
for trial in $(seq "$trials"); do
  out=$work/trial$trial
  attempt=0
  while :; do
    attempt=$((attempt + 1))
    resume=()
    [ -f "$out/ckpt/latest" ] && resume=(--set resume=true)
    [ -n "$(find "$out/ckpt" -name '*.tmp' 2>/dev/null)" ] && mid_write=$((mid_write + 1))
    # Killed before its first checkpoint: nothing to continue, the run starts over.
    [ ${#resume[@]} -eq 0 ] && rm -rf "$out"
    fault=
    if [ $attempt -eq 1 ] && [ $((trial % 3)) -eq 0 ]; then
      fault="rank:$((RANDOM % 2)),step:$((3 * (1 + RANDOM % 7))),at:checkpoint"
    fi
    log=$work/trial$trial-$attempt.log
    PFC_FAULT=$fault mpiexec -n 2 "$PFC" train input/smoke.toml "${settings[@]}" \
      --set output=\"$out\" "${resume[@]}" >"$log" 2>&1 &
    launcher=$!
    if [ -z "$fault" ] && [ $attempt -le 4 ]; then
      sleep "$((RANDOM % 25 + 2))e-1"
      victim=$(rank_pid "$out" $((RANDOM % 2)))
      [ -n "$victim" ] && kill -KILL "$victim" 2>/dev/null
    fi
    code=0
    wait "$launcher" || code=$?
    [ $code -eq 0 ] && break
    total_kills=$((total_kills + 1))
    if ! grep -q "Killed\|kills itself\|exited on signal 9" "$log"; then
      fail "trial $trial attempt $attempt failed by itself (exit $code)"
      tail -n 15 "$log"
      continue 2
    fi
  done
  inspect same-losses "$work/straight" "$out" 1 "$steps" || fail "trial $trial: losses differ"
  inspect same-checkpoint "$work/straight/ckpt/step_0000024" "$out/ckpt/step_0000024" ||
    fail "trial $trial: the final checkpoint differs"
  leftovers=$(find "$out/ckpt" -name '*.tmp')
  [ -z "$leftovers" ] || fail "trial $trial left $leftovers"
  echo "trial $trial: $((attempt - 1)) kill(s), then identical to the uninterrupted run"
done
echo "$trials trials, $total_kills kills ($mid_write in the middle of a checkpoint), seed $seed"
[ "$failures" -eq 0 ]
