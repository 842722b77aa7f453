#!/usr/bin/env bash
# `--precision bf16` is refused before any work, exit 2, saying why: on --device cuda (where
# --fp16 is), with pfc golden (which checks fp32 and fp64 only), and on a CPU whose instruction set
# (the one `pfc info` reports) has neither AVX512_BF16 nor AMX, naming that set. Nothing is
# read first: the checkpoints and files named need not exist. Training with fp16 = true (bf16
# products on the CPU) is not refused on such a CPU: it runs, and says it is slower there.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -x "${PFC:-}" ] || { echo "skipped: \$PFC is not built"; exit 77; }
. "$here/check_support.sh"

expect_exit 2 embed_cuda "--precision bf16 needs --device cpu" -- \
  "$PFC" embed "$work/run" "$work/a.bin" --output "$work/e.h5" --precision bf16 --device cuda
expect_exit 2 verify_fp16 "--precision bf16 needs --device cpu" -- \
  "$PFC" verify "$work/run" "$work/a.bin" --precision bf16 --device cuda --fp16
expect_exit 2 ijb_cuda "--precision bf16 needs --device cpu" -- \
  "$PFC" ijb "$work/run" "$work/ijb" --precision bf16 --device cuda
: >"$work/golden.h5"  # pfc golden's FILE must exist; it is refused before it is read
expect_exit 2 golden_bf16 "pfc golden checks" "fp32 and fp64" -- \
  "$PFC" golden "$work/golden.h5" --case tiny --precision bf16
expect_exit 2 verify_f16 "--precision" -- \
  "$PFC" verify "$work/run" "$work/a.bin" --precision f16

# A CPU without bf16 instructions, as oneDNN sees one when its instruction set is capped below
# them (its own ONEDNN_MAX_CPU_ISA): pfc info and the refusal name the same set. Training with
# fp16 = true still runs, with a warning naming the set: the bf16 operands are widened to f32
# (exactly) for oneDNN's f32 kernels (cpu_onednn_conv2d_test holds both to the exact products).
export ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2
isa=$("$PFC" info | sed -n 's/^CPU backend: oneDNN [0-9.]* (\(.*\)), convolutions$/\1/p')
expect_exit 2 verify_no_bf16 "AVX512_BF16 or AMX" "${isa:-built without oneDNN}" -- \
  "$PFC" verify "$work/run" "$work/a.bin" --precision bf16
expect_exit 0 train_widened "fp16: bf16 products" -- "$PFC" train \
  "$PFC_SOURCE_DIR/input/smoke.toml" --set fp16=true --set batch_size=8 --set steps=3 \
  --set checkpoint_every=-1 --set output=\""$work/run_widened"\"
grep -qF "this CPU has no AVX512_BF16 or AMX instructions (oneDNN: $isa" \
  "$work/train_widened.log" || fail "train_widened: no warning naming the instruction set"

[ $failures -eq 0 ] || exit 1
echo "ok"
