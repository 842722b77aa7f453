#!/usr/bin/env bash
# The classifier's golden check under mpiexec -n 1..4: the classes are sharded over the ranks
# and loss, embedding gradient and class-centre gradient must still match arcface_torch within
# 1e-4 (the backbone rows, on rank 0, are bounded as in golden_backbone.sh).
set -euo pipefail
golden=${PFC_GOLDEN:?}
[ -f "$golden" ] || { echo "no golden file at $golden"; exit 77; }
for k in 1 2 3 4; do
  out=$(mpiexec -n "$k" "$PFC" golden "$golden" --case tiny/arcface_sr0.1 --case tiny/arcface_sr1 \
        --tolerance 2e-3)
  echo "$out" | grep -E "^(loss|embeddings_grad|pfc.weight)|ranks?\)"
  # The classifier rows themselves must hold to 1e-4.
  echo "$out" | awk '/^(loss|embeddings_grad|pfc.weight)/ {
    for (i = 2; i <= NF; i++) if ($i == "ok" || $i == "FAIL") error = $(i - 1)
    if (error + 0 > 1e-4) bad = 1
  } END { exit bad }'
done
