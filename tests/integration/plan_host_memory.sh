#!/usr/bin/env bash
# A plan holds no data, on the device or on the host: `pfc plan`, `pfc plan --max-classes` and
# `pfc train`'s memory check take the same memory and about the same time at sizes no host
# holds as at the smoke config's own. Each runs under an address-space limit (ulimit -v) and a
# timeout, and its peak RSS is held against the smoke plan's:
#  - 56M classes at sample rate 1 (a host index of the classes took ~31 B per class);
#  - --max-classes with embedding_size = 1 for an H200 (a search up to ~4 x 10^9 classes, where
#    a shard passes 2^31 rows, which cuBLAS's 64-bit GEMM takes: memory alone bounds it);
#  - image_size = 65536 (a 412 GB batch) and embedding_size = 2^30 (a 550 GB layer to
#    initialise);
#  - pfc train refusing a run at 56M classes, naming what fits, with nothing written.
# It prints each figure (rc, seconds, peak RSS), the README's "tens of MB".
set -uo pipefail
cd "${PFC_SOURCE_DIR:?}"
. tests/integration/check_support.sh
export OPENBLAS_NUM_THREADS=1

# The limit on the address space: the executable with its libraries (CUDA's in a CUDA build)
# and threads' stacks maps 1-1.5 GB before it plans anything; a plan that held ~31 B per class
# took 1.9 GB of RSS at 56M classes, and pfc train's check 14 GB before it was stopped.
limit_mb=${PFC_PLAN_LIMIT_MB:-2048}
slack_mb=64  # peak RSS allowed beyond the smoke plan's

# measure NAME CMD...: CMD under the limit and a 60 s timeout; $work/NAME.fig gets
# "rc seconds peak_rss_mb", $work/NAME.log its output.
measure() {
  local name=$1
  shift
  /usr/bin/python3 - "$limit_mb" "$@" >"$work/$name.fig" 2>"$work/$name.log" <<'PY'
import resource, subprocess, sys, time
limit = int(sys.argv[1]) * 1024 * 1024
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
start = time.monotonic()
try:
    rc = subprocess.run(sys.argv[2:], preexec_fn=cap, stdout=sys.stderr, timeout=60).returncode
except subprocess.TimeoutExpired:
    rc = 124
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(rc, f"{time.monotonic() - start:.1f}", peak_mb)
PY
  read -r rc seconds peak <"$work/$name.fig"
  echo "$name: rc $rc, ${seconds} s, peak RSS ${peak} MB"
}

plan=("$PFC" plan input/smoke.toml)
measure smoke "${plan[@]}" --gpu v100 --set "output=\"$work/smoke\""
[ "$rc" = 0 ] || { fail "the smoke plan: rc $rc"; cat "$work/smoke.log"; }
base=$peak

check() {  # check NAME WANT_RC: the last measure's exit code, and its peak against the smoke's
  [ "$rc" = "$2" ] || { fail "$1: rc $rc, want $2"; tail -n 5 "$work/$1.log"; }
  ((peak <= base + slack_mb)) || fail "$1: peak RSS ${peak} MB, the smoke plan's ${base} MB"
}

measure classes_56m "${plan[@]}" --gpu v100 --set num_classes=56000000 --set sample_rate=1.0 \
  --set "output=\"$work/classes_56m\""
check classes_56m 0
grep -q "^  does not fit: needs" "$work/classes_56m.log" || fail "56M classes: no fit verdict"

measure max_classes "${plan[@]}" --max-classes --gpu h200 --set device=cuda \
  --set embedding_size=1 --set "output=\"$work/max_classes\""
check max_classes 0
grep -q "largest num_classes that fits: cuda on NVIDIA H200" "$work/max_classes.log" ||
  fail "--max-classes: no table"
# cuBLAS's 64-bit entry points take shards past 2^31 rows: memory alone bounds the count.
grep -qE "^ +f32 +[0-9]{10,} " "$work/max_classes.log" ||
  fail "--max-classes: the f32 count is not past 2^31 classes"
! grep -q "the planned backend refuses" "$work/max_classes.log" ||
  fail "--max-classes: cuda refused a count its 64-bit GEMM can run"

measure image_65536 "${plan[@]}" --set image_size=65536 --set "output=\"$work/image_65536\""
check image_65536 0
measure embedding_2e30 "${plan[@]}" --set embedding_size=1073741824 \
  --set "output=\"$work/embedding_2e30\""
check embedding_2e30 0

# Logits of 8192 x 56M: no host runs it, while its class centres alone (448 MB) would pass.
measure train_refused "$PFC" train input/smoke.toml --set sample_rate=1.0 \
  --set num_classes=56000000 --set embedding_size=1 --set batch_size=8192 \
  --set num_image=100000 --set "output=\"$work/train_refused\""
check train_refused 2
grep -q "this run does not fit: it needs" "$work/train_refused.log" &&
  grep -q "this config fits, to 1 %" "$work/train_refused.log" ||
  { fail "the refusal does not say what it needs and what fits"; cat "$work/train_refused.log"; }
[ ! -e "$work/train_refused" ] || fail "a refused run wrote $work/train_refused"

[ "$failures" -eq 0 ]
