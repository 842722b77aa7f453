#!/usr/bin/env bash
# `pfc golden` on the CPU against the f64 reference file (arcface_torch in float64: the exact
# answer), on tiny (both cases) and r50, by each precision's rule:
#  - fp64, an f64 run from the input to the last gradient: every tensor within 1e-10 of exact;
#  - fp32: every tensor within max(1e-4, 4 x arcface_torch's own fp32 error on the same
#    problem), and the median of our error / arcface_torch's at most 1.
# r50's worst fp32 tensor, layer2.0.bn2.bias (1.8e-3, 3.6 x arcface_torch's CPU error), is one
# PReLU kink: element [1, 10, 18, 67] of layer2.0.prelu's input is +5.7e-9 exactly and -7.5e-9
# after pfc's f32 forward, so its backward takes the slope 0.299 instead of 1 there; that one
# element carries 99.9% of the error of the gradient reaching bn2, all of it in channel 67's
# bias and, through bn2's mean term, 1/6272 of it in each of that channel's input gradients,
# from where it reaches every tensor below (ratios of 0.6-1.8 there, 0.2 above). A jump of the
# derivative, not rounding that compounds; the fp64 run lands within 1e-12 on the same tensor.
# MobileFaceNet (mbf/arcface_sr1 of the parity file: grouped and depthwise convolutions, the
# GDC head) by the same rules, its 16 exact-zero bias gradients measured against their
# weight's, and its inference forward against eval_embeddings.
# Then the rule's failure path: a bound no f32 run can meet exits 3 and says which tensors.
set -euo pipefail
. "$(dirname "$0")/check_support.sh"
golden=${PFC_GOLDEN:?}
[ -f "$golden" ] || { echo "no golden file at $golden (tests/golden)"; exit 1; }
for precision in fp64 fp32; do
  "$PFC" golden "$golden" --case tiny/arcface_sr0.1 --case tiny/arcface_sr1 --case r50/arcface_sr1 \
    --device cpu --precision "$precision" | tee "$work/$precision.txt" |
    grep -E "^(tiny|r50)/|^rule|compared|^worst|^error /"
  # The table names case, precision, ranks and backend, and holds a row per tensor.
  title="^r50/arcface_sr1  (cpu, $precision, 1 rank; against the f64 file"
  grep -q "$title" "$work/$precision.txt" ||
    fail "$precision: the r50 table's title does not name case, backend, precision and ranks"
  [ "$(grep -c "compared, 0 failed" "$work/$precision.txt")" -eq 3 ] ||
    fail "$precision: not every case passed"
  # The README's count of bias gradients that are exactly zero: 13 in tiny, 30 in r50.
  [ "$(grep -c "true value 0" "$work/$precision.txt")" -eq 43 ] ||
    fail "$precision: not 13 + 30 exact-zero gradients measured against their weight's"
done
grep -qE "^eval_embeddings .* ok *$" "$work/fp64.txt" ||
  fail "eval_embeddings (the inference forward) is not in the table, or not ok"

parity=${PFC_GOLDEN_PARITY:?}
[ -f "$parity" ] || { echo "no parity golden file at $parity (tests/golden)"; exit 1; }
for precision in fp64 fp32; do
  "$PFC" golden "$parity" --case mbf/arcface_sr1 --device cpu --precision "$precision" |
    tee "$work/mbf-$precision.txt" | grep -E "^mbf/|^rule|compared|^worst|^error /"
  grep -q "compared, 0 failed, 0 skipped" "$work/mbf-$precision.txt" ||
    fail "mbf $precision: not every tensor compared and passed"
  [ "$(grep -c "true value 0" "$work/mbf-$precision.txt")" -eq 16 ] ||
    fail "mbf $precision: not 16 exact-zero gradients measured against their weight's"
  grep -qE "^eval_embeddings .* ok *$" "$work/mbf-$precision.txt" ||
    fail "mbf $precision: eval_embeddings is not in the table, or not ok"
done

rc=0
"$PFC" golden "$golden" --case tiny/arcface_sr1 --precision fp32 --tolerance 1e-9 \
  >"$work/strict.txt" || rc=$?
[ "$rc" -eq 3 ] || fail "an f32 run held to 1e-9 exits $rc, not 3"
grep -q "FAIL" "$work/strict.txt" || fail "the failing rows are not marked FAIL"

# Bad requests are usage errors (exit 2) that say what is wrong.
expect_usage_error() {  # expect_usage_error MESSAGE ARGS...
  local message=$1 rc=0
  shift
  "$PFC" golden "$golden" "$@" >"$work/usage.txt" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "pfc golden $* exits $rc, not 2"
  grep -q "$message" "$work/usage.txt" || fail "pfc golden $* does not say '$message'"
}
expect_usage_error "its cases: r50/arcface_sr1, tiny/arcface_sr0.1, tiny/arcface_sr1" \
  --case tiny/arcface_sr2
expect_usage_error "needs --device cpu" --case tiny/arcface_sr1 --precision fp64 --device cuda
expect_usage_error "tolerance" --case tiny/arcface_sr1 --tolerance 0
[ $failures -eq 0 ]
