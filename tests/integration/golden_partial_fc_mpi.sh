#!/usr/bin/env bash
# The whole golden check under mpiexec -n 1 and 3 (`golden_partial_fc_mpi.sh all`, slow: 1..4),
# against the f64 reference file: the classes
# are sharded over the ranks (loss, embedding gradient and class-centre gradient on every
# rank), the backbone runs on rank 0; tiny and r50, and MobileFaceNet (mbf, from the parity
# file), in fp64 (every tensor within 1e-10 of exact) and in fp32 (arcface_torch's own fp32
# error as the measure, golden_backbone.sh); and with the class centres stored in f16 and bf16.
set -euo pipefail
golden=${PFC_GOLDEN:?}
parity=${PFC_GOLDEN_PARITY:?}
[ -f "$golden" ] && [ -f "$parity" ] || { echo "no golden files at $golden, $parity (tests/golden)"; exit 1; }
rank_counts=(1 3)
[ "${1:-}" = all ] && rank_counts=(1 2 3 4)
for k in "${rank_counts[@]}"; do
  for precision in fp64 fp32; do
    mpiexec -n "$k" "$PFC" golden "$golden" --case tiny/arcface_sr0.1 --case tiny/arcface_sr1 \
      --case r50/arcface_sr1 --precision "$precision" |
      grep -E "^(tiny|r50)/|^(loss|embeddings_grad|pfc.weight)|compared|^worst|^error /"
    mpiexec -n "$k" "$PFC" golden "$parity" --case mbf/arcface_sr1 --precision "$precision" |
      grep -E "^mbf/|^(loss|embeddings_grad|pfc.weight)|compared|^worst|^error /"
  done
done
# Class centres stored in 16 bits: each bound widened by what rounding the exact centres alone
# does to an exact computation (pfc's f64 run on them), sharded over 1 and 3 ranks; a training
# case, whose optimiser rounds stochastically, is refused with a reason.
for k in 1 3; do
  for storage in f16 bf16; do
    mpiexec -n "$k" "$PFC" golden "$golden" --case tiny/arcface_sr0.1 --case tiny/arcface_sr1 \
      --classifier-storage "$storage" |
      grep -E "^tiny/|^(loss|embeddings_grad|pfc.weight)|compared|^worst|^error /"
  done
done
set +e
refusal=$("$PFC" golden "$parity" --case tiny/sgd_2steps --classifier-storage f16 2>&1)
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "check it with f32" <<<"$refusal" ||
  { echo "a training case with f16 centres: exit $rc, $refusal"; exit 1; }
