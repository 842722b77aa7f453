#!/usr/bin/env bash
# arcface_torch's Vision Transformers (tests/golden/arcface_torch_vit_f64.h5) on the CPU: the
# 2-block vit_tiny (network = "custom", built from the group's attributes) and arcface_torch's
# own vit_t, each plain (no masking, no DropPath) and masked (the mask noise and DropPath draws
# arcface_torch recorded, replayed), forward and backward through the loss, every tensor
# compared with arcface_torch's exact values: fp64 within 1e-10, fp32 within max(1e-4, 4 x
# arcface_torch's own fp32 error) with the median ratio at most 1. vit_t in fp64 and on 2 ranks
# in fp32 only: its f64 reference loops are the slow part.
set -euo pipefail
golden=${PFC_SOURCE_DIR:?}/tests/golden/arcface_torch_vit_f64.h5
[ -f "$golden" ] || { echo "no golden file at $golden"; exit 77; }
tiny=(vit_tiny/arcface_sr1 vit_tiny/arcface_sr1_masked)
vit_t=(vit_t/arcface_sr1 vit_t/arcface_sr1_masked)

check() {  # check RANKS PRECISION CASE...: pfc golden; prints each case's summary
  local ranks=$1 precision=$2
  shift 2
  local cases=()
  for c in "$@"; do cases+=(--case "$c"); done
  local out
  out=$(mpiexec -n "$ranks" "$PFC" golden "$golden" "${cases[@]}" --device cpu \
        --precision "$precision") || { echo "$out"; exit 1; }
  echo "$out" | grep -E "ranks?;|compared|^worst|median"
}

check 1 fp64 "${tiny[@]}" "${vit_t[@]}"
check 1 fp32 "${tiny[@]}" "${vit_t[@]}"
check 2 fp64 "${tiny[@]}"
check 2 fp32 "${tiny[@]}" "${vit_t[@]}"
