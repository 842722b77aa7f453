#!/usr/bin/env bash
# modules/pfc.lua under Debian's Lmod: loaded from the source tree (pfc from the build
# folder) and from an installed tree (cmake --install), `pfc info` runs, unloading undoes it.
# Skips (77) without Lmod (tests/run.sh installs lmod).
set -euo pipefail

src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PFC_BINARY_DIR:?PFC_BINARY_DIR must name the build folder}
lmod_init=/usr/share/lmod/lmod/init/bash
[[ -f $lmod_init ]] || { echo "skip: Lmod is not installed ($lmod_init)"; exit 77; }
set +u  # Lmod's shell functions read unset variables
# shellcheck disable=SC1090
source "$lmod_init"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pfc_modules.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

# From the checkout.
module use "$src/modules"
PFC_BUILD_DIR=$build module load pfc
[[ $(command -v pfc) == "$build/bin/pfc" ]] || fail "pfc on PATH is '$(command -v pfc)'"
[[ $PFC_HOME == "$src" && $PFC_JOBS == "$src/jobs" ]] || fail "PFC_HOME=$PFC_HOME PFC_JOBS=$PFC_JOBS"
pfc info | tee "$tmp/info.txt"
grep -q '^pfc [0-9]' "$tmp/info.txt" || fail "pfc info printed no version"
module unload pfc
[[ :$PATH: != *":$build/bin:"* ]] || fail "unloading left $build/bin on PATH"
[[ -z ${PFC_HOME:-} ]] || fail "unloading left PFC_HOME=$PFC_HOME"
module unuse "$src/modules"

# From an installed tree: the modulefile finds <prefix>/bin, lib and share/pfc/jobs.
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install (it needs every installed target built)"; }
[[ -f $tmp/prefix/share/pfc/modules/pfc.lua ]] || fail "cmake --install did not install pfc.lua"
module use "$tmp/prefix/share/pfc/modules"
module load pfc
[[ $(command -v pfc) == "$tmp/prefix/bin/pfc" ]] || fail "installed pfc on PATH is '$(command -v pfc)'"
[[ $PFC_HOME == "$tmp/prefix" && $PFC_JOBS == "$tmp/prefix/share/pfc/jobs" ]] ||
  fail "installed PFC_HOME=$PFC_HOME PFC_JOBS=$PFC_JOBS"
[[ -x $PFC_JOBS/bench_row.sh && -f $PFC_JOBS/rows/row_1m.sbatch ]] || fail "jobs not installed"
pfc info >/dev/null
module unload pfc
echo "modules: ok"
