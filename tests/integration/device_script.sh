#!/usr/bin/env bash
# The device script's plumbing (tests/gpu/run_on_device.sh) on an installed tree of this build
# with no GPU visible (CUDA_VISIBLE_DEVICES empty, so also on a GPU machine): the GPU steps are
# skipped, the CPU training step runs and its figures are read with `pfc report --csv`, and the
# output folder ends with just preflight.txt, summary.txt and logs.tar.gz within what the GPU
# machine returns (at most 8 files of 16 MiB, two folders deep) — after a full run, a run whose
# budget is too small for the plan, a rerun of chosen steps, and one stopped by SIGTERM during
# its pre-flight. The tree carries the HDF5 it was built with, found before the system's.
# Then the library choice on fake library folders: a tree whose bin/pfc and pfc_gpu_tests are
# scripts that load like the real ones (each soname from the first folder of LD_LIBRARY_PATH
# that holds it, `pfc info` reporting the versions found; an `ldd` beside them answers alike)
# — cuDNN and NCCL each only in a Python package of its own, cuBLAS in the system's folder, an
# older cuDNN and another HDF5 there too; and the gpu tests in their three calls, with gtest's
# XML reports in the archive, on the real pfc_gpu_tests (which skips without a GPU).
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
  [[ $files == "logs.tar.gz preflight.txt summary.txt " ]] ||
    fail "$out holds '$files', not the three files"
  [[ -n $(find "$out" -mindepth 3) ]] && fail "$out has entries more than two folders down"
  local f
  for f in "$out"/*; do
    (($(stat -c %s "$f") <= 16 * 1024 * 1024)) || fail "$f is over 16 MiB"
  done
  tar -tzf "$out/logs.tar.gz" >"$work/listing" 2>&1 || fail "$out/logs.tar.gz is not a tar.gz"
  grep -q '^\./summary\.txt$' "$work/listing" || fail "the archive lacks summary.txt"
  grep -q '^\./preflight\.txt$' "$work/listing" || fail "the archive lacks preflight.txt"
}
# archived OUT NAME: a file of OUT's archive.
archived() { tar -xzf "$1/logs.tar.gz" -O "./$2" 2>/dev/null; }

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
for step in gpu_tests_kernels gpu_tests_cudnn gpu_large_gemm train_cuda train_cuda_fp16 \
  bench_backbone bench_mp_3m bench_pfc_3m bench_vit_t golden_fp32_tiny golden_fp16_r50 bench_pfc_16m \
  bench_pfc_29m_f16 sweep; do
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
# The pre-flight, and the HDF5 pfc was built with: installed, and loaded before any other.
for section in "== /etc/os-release" "== ldd $PFC_DIST/bin/pfc (before the library choice)" \
  "== ldd $PFC_DIST/bin/pfc_gpu_tests (before the library choice)" \
  "== ldconfig -p: mpi, hdf5, openblas, cudnn, cublas, nccl" "== nvidia-smi -L" \
  "== library folders chosen: " "== ldd $PFC_DIST/bin/pfc (with the chosen folders)" \
  "HDF5_DISABLE_VERSION_CHECK=1" "LD_LIBRARY_PATH: $PFC_DIST/lib:"; do
  grep -qF -- "$section" "$work/full/preflight.txt" || fail "preflight.txt lacks '$section'"
done
hdf5=$(ldd "$build/bin/pfc" | awk '$1 ~ /^libhdf5/ { print $1 }')
[[ -n $hdf5 ]] || fail "ldd does not show the HDF5 pfc links"
for library in $hdf5 libsz.so.2 libaec.so.0; do
  [[ -f $PFC_DIST/lib/$library ]] || fail "the installed tree lacks lib/$library"
done
# fmt and spdlog, linked as shared libraries, ship under the sonames pfc asks for.
formatting=$(ldd "$build/bin/pfc" | awk '$1 ~ /^lib(fmt|spdlog)\.so/ { print $1 }')
[[ $(wc -w <<<"$formatting") == 2 ]] || fail "ldd does not show pfc's fmt and spdlog: $formatting"
for library in $formatting; do
  [[ -f $PFC_DIST/lib/$library ]] || fail "the installed tree lacks lib/$library"
done
grep -qF "$hdf5 => $PFC_DIST/lib/$hdf5" "$work/full/preflight.txt" ||
  fail "pfc does not load the tree's $hdf5: $(grep -F "$hdf5" "$work/full/preflight.txt")"
grep -q "^HDF5_DISABLE_VERSION_CHECK=1 set: an HDF5 release other than the shipped one warns instead" \
  "$work/full/summary.txt" ||
  fail "the summary does not say that the HDF5 release check is off"

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

# ---- stopped by SIGTERM during the pre-flight: the three files still appear -------------------
mkdir -p "$work/slowbin"
cat >"$work/slowbin/nvidia-smi" <<'EOF'
#!/bin/sh
sleep 30
EOF
chmod +x "$work/slowbin/nvidia-smi"
PATH=$work/slowbin:$PATH bash "$script" "$work/stopped" >"$work/stopped.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  grep -qs "^== nvidia-smi -L" "$work/stopped/preflight.txt" && break
  sleep 0.1
done
start=$(date +%s%N)
kill -TERM "$pid"
wait "$pid"
rc=$?
took_ms=$((($(date +%s%N) - start) / 1000000))
((rc == 143)) || fail "the stopped run exited $rc, want 143"
# Under the pre-flight step's own 5 s limit: the stop, not the limit, ended it.
((took_ms < 4000)) || {
  tail -n 5 "$work/stopped.log" "$work/stopped/preflight.txt"
  fail "the stop took ${took_ms} ms to be taken"
}
check_returns "$work/stopped"
grep -q "^stopped by signal 15" "$work/stopped/summary.txt" || fail "the stop is not in the summary"
for section in "== /etc/os-release" "(before the library choice)" "(stopped by signal 15"; do
  grep -qF -- "$section" "$work/stopped/preflight.txt" ||
    fail "the stopped run's preflight.txt lacks '$section'"
done

# ---- the library choice, on fake library folders ----------------------------------------------
fake=$work/fake
libs=$work/libs
site=$libs/torch/.venv/lib/python3.12/site-packages/nvidia
mkdir -p "$fake/bin" "$fake/lib" "$libs/system" "$site/cudnn/lib" "$site/nccl/lib" "$work/fakeldd"
# fake_library FOLDER SONAME VERSION
fake_library() { echo "version $3" >"$1/$2"; }
fake_library "$fake/lib" libhdf5_serial.so.103 1.10.8
fake_library "$fake/lib" libsz.so.2 2.0.1
fake_library "$fake/lib" libaec.so.0 0.0.12
fake_library "$libs/system" libhdf5_serial.so.103 1.10.10
fake_library "$libs/system" libcudnn.so.9 9.14.0
fake_library "$libs/system" libcublas.so.13 13.0.2
fake_library "$site/cudnn/lib" libcudnn.so.9 9.19.0
fake_library "$site/nccl/lib" libnccl.so.2 2.28.9
cat >"$fake/bin/pfc" <<'EOF'
#!/usr/bin/env bash
# Starts as the dynamic loader would start pfc: every soname in NEEDS from the first folder
# of LD_LIBRARY_PATH holding it, else the loader's error; `info` reports the versions loaded.
IFS=: read -r -a dirs <<<"${LD_LIBRARY_PATH:-}"
loaded() {
  local d
  for d in "${dirs[@]}"; do
    [[ -n $d && -f $d/$1 ]] && { sed -n 's/^version //p' "$d/$1"; return 0; }
  done
  return 1
}
while read -r soname; do
  loaded "$soname" >/dev/null || {
    echo "$0: error while loading shared libraries: $soname: cannot open shared object file" >&2
    exit 127
  }
done <"$0.needs"
if [[ ${1:-} == info ]]; then
  grep -q cudnn "$0.needs" && echo "cuDNN: built with 9.19.0, running $(loaded libcudnn.so.9)"
  grep -q cublas "$0.needs" && echo "cuBLAS: built with 13.0.2, running $(loaded libcublas.so.13)"
  grep -q nccl "$0.needs" && echo "NCCL: built with 2.28.9, running $(loaded libnccl.so.2)"
  echo "visible GPUs: ${FAKE_GPUS:-0}"
fi
exit 0
EOF
# ldd of a fake executable (one with a .needs list): each soname as the fake loader finds it;
# of anything else, the real ldd's answer.
cat >"$work/fakeldd/ldd" <<EOF
#!/usr/bin/env bash
[[ -f \$1.needs ]] || exec $(command -v ldd) "\$@"
IFS=: read -r -a dirs <<<"\${LD_LIBRARY_PATH:-}"
while read -r soname; do
  found="not found"
  for d in "\${dirs[@]}"; do [[ -n \$d && -f \$d/\$soname ]] && { found=\$d/\$soname; break; }; done
  printf '\t%s => %s\n' "\$soname" "\$found"
done <"\$1.needs"
EOF
chmod +x "$fake/bin/pfc" "$work/fakeldd/ldd"
cp -p "$fake/bin/pfc" "$fake/bin/pfc_gpu_tests"
printf '%s\n' libhdf5_serial.so.103 libsz.so.2 libaec.so.0 libcudnn.so.9 libcublas.so.13 \
  libnccl.so.2 | tee "$fake/bin/pfc.needs" >"$fake/bin/pfc_gpu_tests.needs"

# fake_run NAME: the script's pfc_info step on the fake tree and folders.
fake_run() {
  PATH=$work/fakeldd:$PATH PFC_DIST=$fake PFC_DEVICE_STEPS=pfc_info \
    PFC_DEVICE_SYSTEM_LIB_DIRS=$libs/system PFC_DEVICE_PYTHON_ROOT=$libs/torch \
    bash "$script" "$work/$1" >"$work/$1.log" 2>&1
}
fake_run libraries
rc=$?
((rc == 0)) || fail "with every library somewhere the run exited $rc: $(cat "$work/libraries.log")"
check_returns "$work/libraries"
pre=$work/libraries/preflight.txt
grep -qF "== library folders chosen: $site/cudnn/lib $libs/system $site/nccl/lib" "$pre" ||
  fail "not the newest cuDNN, the system's cuBLAS and the package's NCCL: $(grep chosen "$pre")"
grep -qF "LD_LIBRARY_PATH: $fake/lib:$site/cudnn/lib:$libs/system:$site/nccl/lib:$libs/system" \
  "$pre" || fail "the tree's lib folder and the chosen ones do not come first: $(grep ^LD_ "$pre")"
# Before the choice NCCL is nowhere on the path; no failure: the check comes after the choice.
grep -q "libnccl.so.2 => not found" <<<"$(sed -n '/^== ldd .* (before/,/^== ldconfig/p' "$pre")" ||
  fail "the pre-flight's first ldd should miss NCCL"
after=$(sed -n '/^== ldd .* (with the chosen folders)/,$p' "$pre")
grep -q "not found" <<<"$after" && fail "with the chosen folders ldd still misses: $after"
grep -qF "libhdf5_serial.so.103 => $fake/lib/libhdf5_serial.so.103" <<<"$after" ||
  fail "the system's HDF5 beats the tree's: $after"
grep -qF "libcudnn.so.9 => $site/cudnn/lib/libcudnn.so.9" <<<"$after" ||
  fail "the older system cuDNN is loaded: $after"
grep -q "^  cuDNN: built with 9.19.0, running 9.19.0$" "$work/libraries/summary.txt" ||
  fail "the summary does not show cuDNN 9.19.0 in use"
summary_line "$work/libraries" pfc_info | grep -q "| PASS$" || fail "pfc_info did not pass"

# NCCL nowhere: the run names the library pfc cannot find, and fails.
rm -r "$site/nccl"
fake_run no_nccl
rc=$?
((rc == 1)) || fail "with NCCL nowhere the run exited $rc, want 1"
grep -q "^$fake/bin/pfc cannot find: libnccl.so.2 => not found" "$work/no_nccl/summary.txt" ||
  fail "the summary does not name the missing NCCL: $(cat "$work/no_nccl/summary.txt")"

# ---- the gpu tests in three calls, each with its XML report -----------------------------------
# The real pfc_gpu_tests (its tests skip without a GPU) in a tree whose pfc says it sees one.
if [[ -x $build/bin/pfc_gpu_tests ]]; then
  : >"$fake/bin/pfc.needs"
  rm "$fake/bin/pfc_gpu_tests" "$fake/bin/pfc_gpu_tests.needs" "$fake/lib"/*
  cp "$build/bin/pfc_gpu_tests" "$fake/bin/pfc_gpu_tests"
  PATH=$work/fakeldd:$PATH PFC_DIST=$fake FAKE_GPUS=1 PFC_DEVICE_PYTHON_ROOT=$work/none \
    PFC_DEVICE_STEPS="gpu_tests_kernels gpu_tests_cudnn gpu_large_gemm" \
    bash "$script" "$work/split" >"$work/split.log" 2>&1 ||
    fail "the gpu tests' run exited non-zero: $(cat "$work/split/summary.txt")"
  check_returns "$work/split"
  for step in gpu_tests_kernels gpu_tests_cudnn gpu_large_gemm; do
    summary_line "$work/split" "$step" |
      grep -Eq "\| PASS \([0-9]+ passed, [1-9][0-9]* skipped, 0 failed\)$" ||
      fail "step $step: $(summary_line "$work/split" "$step")"
    grep -q "<testsuites" <<<"$(archived "$work/split" "$step.xml")" || fail "no XML report of $step"
  done
  suites() { archived "$work/split" "$1.xml" | sed -n 's/.*<testsuite name="\([^"]*\)".*/\1/p'; }
  grep -q "GpuPartialFc$" <<<"$(suites gpu_tests_kernels)" || fail "the first call lacks PartialFC"
  grep -q "GpuConv" <<<"$(suites gpu_tests_kernels)" && fail "the first call ran cuDNN's convolutions"
  grep -q "GpuConv$" <<<"$(suites gpu_tests_cudnn)" || fail "the second call lacks the convolutions"
  grep -Eq "GpuPartialFc$|GpuLargeGemm" <<<"$(suites gpu_tests_cudnn)" &&
    fail "the second call repeats the first's tests or the large GEMM"
  [[ $(suites gpu_large_gemm) == GpuLargeGemm ]] ||
    fail "the large GEMM's call ran '$(suites gpu_large_gemm | tr '\n' ' ')'"
fi

((failures == 0)) || { cat "$work/full.log"; exit 1; }
echo "device script plumbing: all checks passed"
