#!/usr/bin/env bash
# What a process is given that it cannot use is refused by name, before any work:
#  - OMP_NUM_THREADS or OPENBLAS_NUM_THREADS beyond 8 threads per CPU of the node (99999 used
#    to start tens of thousands of threads and crash), and pfc ijb --threads likewise: exit 2
#    naming the variable, its value and the limit; the limit itself runs;
#  - a path that is not UTF-8 text ($'out\xff') given as a config value (--set output, quoted
#    or not) or as pfc import's RUN_DIR: exit 2 naming it, and no folder made under any name
#    (it used to become a folder whose name held the quotes); a path only opened or created
#    passes through as bytes, one an output records (export's and embed's RUN) is refused;
#  - an address-space limit (ulimit -v) too small for pfc to start: exit 2 naming the limit and
#    the need, instead of a crash or a hang in a library's start-up; one enough to start but not
#    for the run: exit 1 naming the allocation and the limit, not a crash.
set -uo pipefail
. "$(dirname "$0")/run_support.sh"

cpus=$(getconf _NPROCESSORS_ONLN)
limit=$((8 * cpus))
for variable in OMP_NUM_THREADS OPENBLAS_NUM_THREADS; do
  expect_exit 2 "${variable}_99999" \
    "$variable=99999 is more threads than this node can run: at most $limit (8 per CPU" -- \
    env "$variable=99999" "$PFC" info
  expect_exit 2 "${variable}_beyond_int" "$variable=99999999999999999999 is more threads" -- \
    env "$variable=99999999999999999999" "$PFC" info
done
expect_exit 0 threads_at_the_limit "backends:" -- env OMP_NUM_THREADS=$limit "$PFC" info
expect_exit 2 ijb_threads "--threads 99999 is more threads than this node can run: at most" -- \
  "$PFC" ijb "$work/no_run" "$work/no_ijb" --threads 99999

# ---- paths that are not UTF-8 --------------------------------------------------------------
bad=$'out\xff'
"$PFC" train input/smoke.toml --set steps=1 --set checkpoint_every=0 \
  --set output=\"$work/run\" >"$work/run.log" 2>&1 || { cat "$work/run.log"; fail "pfc train"; }
before=$(ls -A "$work")
expect_exit 2 set_output_quoted "--set output '\"$work/out\\xFF\"' is not UTF-8 text" "TOML" -- \
  "$PFC" train input/smoke.toml --set steps=1 --set output=\""$work/$bad"\"
expect_exit 2 set_output_bare "--set output '$work/out\\xFF' is not UTF-8 text" -- \
  "$PFC" train input/smoke.toml --set steps=1 --set output="$work/$bad"
expect_exit 2 import_run_dir "RUN_DIR '$work/out\\xFF' is not UTF-8 text" -- \
  "$PFC" import "$work/run" "$work/$bad" --config input/smoke.toml
# Nothing made, under the name given or any other (the logs of the refusals aside).
made=$(comm -13 <(echo "$before") <(ls -A "$work" | grep -v '\.log$'))
[ -z "$made" ] || fail "the refusals made: $made"
# A path only opened or created is bytes, passed through as they are; one the output records
# (the run, in an ONNX model's metadata and an embedding file's attributes) must be UTF-8.
expect_exit 0 export_to_bytes "exported" -- "$PFC" export "$work/run" "$work/$bad.onnx"
[ -f "$work/$bad.onnx" ] || fail "no $work/out\xFF.onnx"
ln -s run "$work/run$bad"
expect_exit 2 export_from_bytes "RUN_OR_CHECKPOINT '$work/runout\\xFF' is not UTF-8 text" -- \
  "$PFC" export "$work/run$bad" "$work/run.onnx"
expect_exit 2 embed_from_bytes "RUN_OR_CHECKPOINT '$work/runout\\xFF' is not UTF-8 text" -- \
  "$PFC" embed "$work/run$bad" "$work/run.onnx" --output "$work/emb.h5"

# ---- an address-space limit (ulimit -v) -------------------------------------------------------
# Too small to start: the CUDA libraries crashed in their own start-up code, cuDNN aborted and
# OpenBLAS retried its allocation forever, before pfc ran. Refused before any library starts.
under_limit() {  # under_limit KIB CMD...: CMD under ulimit -v KIB
  local kib=$1
  shift
  timeout 120 bash -c 'ulimit -v "$0" && exec "$@"' "$kib" "$@"
}
expect_exit 2 info_under_1g "the address-space limit (ulimit -v) is 0.95 GiB, and pfc needs" \
  "Raise it" -- under_limit 1000000 "$PFC" info
# Enough to start, not for the run: an allocation that fails is an error naming the need and
# the limit, not a crash.
need=$(sed -n 's/.*pfc needs at least \([0-9.]*\) GiB.*/\1/p' "$work/info_under_1g.log")
if [ -n "$need" ]; then
  kib=$(awk -v g="$need" 'BEGIN { printf "%d", (g + 0.3) * 1024 * 1024 }')
  expect_exit 1 train_beyond_the_limit "out of" "ulimit -v" -- under_limit "$kib" \
    "$PFC" train input/smoke.toml --set image_size=112 --set widths=[64,128,256,512] \
    --set batch_size=512 --set steps=1 --set checkpoint_every=0 --set memory_check=false \
    --set output=\"$work/limited\"
else
  fail "no need in the refusal under ulimit -v"
fi

[ $failures -eq 0 ]
