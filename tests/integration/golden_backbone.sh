#!/usr/bin/env bash
# `pfc golden` on the CPU against arcface_torch's values. tiny/arcface_sr0.1 holds to the fp32
# tolerance of 1e-4 on every tensor. In tiny/arcface_sr1 the gradients of the stem and the
# first block (112x112 maps) differ from arcface_torch's by up to 1.4e-3: they are sums over
# 50 176 positions whose terms nearly cancel, so the 1e-6 elementwise differences between two
# fp32 implementations grow there; this test bounds them at 2e-3 so any regression shows.
set -euo pipefail
golden=${PFC_GOLDEN:?}
[ -f "$golden" ] || { echo "no golden file at $golden"; exit 77; }
"$PFC" golden "$golden" --case tiny/arcface_sr0.1 --device cpu
"$PFC" golden "$golden" --case tiny/arcface_sr1 --device cpu --tolerance 2e-3
