#!/usr/bin/env bash
# The device script's plumbing (tests/gpu/run_on_device.sh) on an installed tree of this build
# with no GPU visible (CUDA_VISIBLE_DEVICES empty, so also on a GPU machine): the GPU steps are
# skipped, the CPU training step runs and its figures are read with `pfc report --csv`, and the
# output folder ends with just summary.txt and logs.tar.gz within what the GPU machine returns
# (at most 8 files of 16 MiB, two folders deep) — after a full run, a run whose budget is too
# small for the plan, a rerun of chosen steps, and one stopped by SIGTERM.
set -uo pipefail

src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PFC_BINARY_DIR:?PFC_BINARY_DIR must name the build folder}
script=$src/tests/gpu/run_on_device.sh
. "$src/tests/integration/check_support.sh"

cmake --install "$build" --prefix "$work/dist" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; echo "FAIL: cmake --install"; exit 1; }
export PFC_DIST=$work/dist CUDA_VISIBLE_DEVICES=""

# check_returns OUT: what the GPU machine would hand back from OUT.
check_returns() {
  local out=$1 files
  files=$(find "$out" -type f | sed "s|^$out/||" | sort | tr '\n' ' ')
  [[ $files == "logs.tar.gz summary.txt " ]] || fail "$out holds '$files', not the two files"
  find "$out" -mindepth 3 | grep -q . && fail "$out has entries more than two folders down"
  local f
  for f in "$out"/*; do
    (($(stat -c %s "$f") <= 16 * 1024 * 1024)) || fail "$f is over 16 MiB"
  done
  tar -tzf "$out/logs.tar.gz" >"$work/listing" 2>&1 || fail "$out/logs.tar.gz is not a tar.gz"
  grep -q '^\./summary\.txt$' "$work/listing" || fail "the archive lacks summary.txt"
}

# summary_line OUT STEP: the step's line of the summary's step table.
summary_line() { grep -E "^$2 \| " "$1/summary.txt"; }

# ---- a full run: everything that needs a GPU is skipped --------------------------------------
start=$SECONDS
bash "$script" "$work/full" >"$work/full.log" 2>&1
rc=$?
took=$((SECONDS - start))
((rc == 0)) || fail "the full run exited $rc (want 0: nothing failed, GPU steps skipped)"
((took < 60)) || fail "the full run took ${took}s without a GPU"
check_returns "$work/full"
grep -Eq '^plan: step limits add up to [0-9]+s \+ 10s for packing, of a 520s budget' \
  "$work/full/summary.txt" || fail "no plan line"
planned=$(sed -n 's/^plan: step limits add up to \([0-9]*\)s.*/\1/p' "$work/full/summary.txt")
((planned > 0 && planned + 10 <= 520)) || fail "the step limits ($planned s) exceed the budget"
summary_line "$work/full" train_cpu | grep -q "| PASS (20 of 20 losses)$" ||
  fail "the CPU training step: $(summary_line "$work/full" train_cpu)"
for step in gpu_tests train_cuda train_cuda_fp16 bench_backbone bench_mp_3m bench_pfc_3m \
  golden_fp32_tiny golden_fp16_r50 bench_pfc_16m sweep; do
  summary_line "$work/full" "$step" | grep -q "| SKIPPED (no GPU visible)$" ||
    fail "step $step: '$(summary_line "$work/full" "$step")', want skipped for want of a GPU"
done
# The CPU run's figures, read with pfc report: samples/s and GiB (ours / on the device).
grep -Eq '^smoke, tiny, cpu f32 \| [0-9]+\.[0-9] \| [0-9]+\.[0-9]{2}/[0-9]+\.[0-9]{2} \| - \| -$' \
  "$work/full/summary.txt" || fail "no figures for the CPU training run"
grep -q '^  cuDNN: built with\|^libraries (pfc info):' "$work/full/summary.txt" ||
  fail "no library section"
grep -q '^\./train_cpu\.log$' "$work/listing" || fail "the archive lacks the step logs"
grep -q '^\./train_cpu/metrics\.h5$' "$work/listing" || fail "the archive lacks the run folders"
grep -q "^step | limit (s) | took (s) | result$" "$work/full.log" ||
  fail "the summary is not printed at the end"

# ---- a budget too small for the plan: steps are skipped, never started short ------------------
PFC_DEVICE_BUDGET_S=20 bash "$script" "$work/small" >"$work/small.log" 2>&1
check_returns "$work/small"
summary_line "$work/small" train_cpu | grep -q "| SKIPPED (budget)$" ||
  fail "with 20 s, 10 of them for packing, the CPU step's 15 s should not fit: \
$(summary_line "$work/small" train_cpu)"

# ---- a rerun of chosen steps, and a step that does not exist ---------------------------------
PFC_DEVICE_STEPS="train_cpu" bash "$script" "$work/rerun" >"$work/rerun.log" 2>&1 ||
  fail "the rerun of train_cpu exited non-zero"
check_returns "$work/rerun"
steps_run=$(awk '/^step \| limit/ { t = 1; next } t && /^$/ { exit } t { n++ } END { print n }' \
  "$work/rerun/summary.txt")
((steps_run == 1)) ||
  fail "the rerun ran more than train_cpu: $(cat "$work/rerun/summary.txt")"
PFC_DEVICE_STEPS="no_such_step" bash "$script" "$work/unknown" >"$work/unknown.log" 2>&1
(($? == 2)) || fail "an unknown step should exit 2"
grep -q "unknown step 'no_such_step'" "$work/unknown.log" || fail "no message naming the step"

# ---- stopped by SIGTERM in the middle of a step: the two files still appear ---------------------
mkdir -p "$work/slowbin"
cat >"$work/slowbin/nvidia-smi" <<'EOF'
#!/bin/sh
sleep 30
EOF
chmod +x "$work/slowbin/nvidia-smi"
PATH=$work/slowbin:$PATH bash "$script" "$work/stopped" >"$work/stopped.log" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q "^== nvidia_smi" "$work/stopped.log" && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
rc=$?
((rc == 143)) || fail "the stopped run exited $rc, want 143"
check_returns "$work/stopped"
grep -q "^stopped by signal 15" "$work/stopped/summary.txt" || fail "the stop is not in the summary"

((failures == 0)) || { cat "$work/full.log"; exit 1; }
echo "device script plumbing: all checks passed"
