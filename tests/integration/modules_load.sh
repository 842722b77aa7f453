#!/usr/bin/env bash
# The Lmod modulefile pfc/<version>.lua under Debian's Lmod: the build tree's (written at
# configure time) and an installed tree's (cmake --install), the latter loaded from a copy in
# another folder, as a site puts it into its module tree. Each puts its own pfc on PATH and
# names the job scripts and configs; `pfc info` runs; whatis gives the version and the help
# names the MPI, CUDA and HDF5 it was built against; unloading undoes it. No variable the
# module sets is one that jobs/build.sh, jobs/local.sh or tests/run.sh read. Skips (77)
# without Lmod (tests/run.sh installs lmod).
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
version=$("$build/bin/pfc" --version | cut -d' ' -f1)

# check_module ROOT BIN JOBS INPUT: what a loaded pfc module must have set.
check_module() {
  [[ $(command -v pfc) == "$2/pfc" ]] || fail "pfc on PATH is '$(command -v pfc)', not $2/pfc"
  [[ $PFC_ROOT == "$1" && $PFC_JOBS_DIR == "$3" && $PFC_INPUT_DIR == "$4" ]] ||
    fail "PFC_ROOT=$PFC_ROOT PFC_JOBS_DIR=$PFC_JOBS_DIR PFC_INPUT_DIR=$PFC_INPUT_DIR"
  [[ -f $PFC_JOBS_DIR/train.sbatch && -f $PFC_JOBS_DIR/rows/row_1m.sbatch ]] ||
    fail "no job scripts in $PFC_JOBS_DIR"
  [[ -f $PFC_INPUT_DIR/smoke.toml ]] || fail "no configs in $PFC_INPUT_DIR"
  pfc info >"$tmp/info.txt" || fail "pfc info failed"
  grep -q "^pfc $version" "$tmp/info.txt" || fail "pfc info printed no version $version"
  grep -q "Version: $version" <<<"$(module whatis pfc 2>&1)" || fail "whatis gives no version"
  module help pfc >"$tmp/help.txt" 2>&1
  for library in "MPI   [A-Za-z]" "CUDA  [A-Za-z]" "HDF5  HDF5 [0-9]"; do
    grep -q "^ *$library" "$tmp/help.txt" || fail "the help names no '$library' built against"
  done
}

# The build tree's modulefile.
before=$(env | cut -d= -f1 | sort)
module use "$build/modulefiles"
module load pfc
check_module "$src" "$build/bin" "$src/jobs" "$src/input"
set_by_module=$(comm -13 <(echo "$before") <(env | cut -d= -f1 | sort) |
  grep -v -e '^_' -e '^LMOD' -e '^__LMOD' -e '^MODULE' -e '^LOADEDMODULES$' || true)
module unload pfc
[[ :$PATH: != *":$build/bin:"* ]] || fail "unloading left $build/bin on PATH"
[[ -z ${PFC_ROOT:-} && -z ${PFC_JOBS_DIR:-} ]] || fail "unloading left PFC_ROOT/PFC_JOBS_DIR"
module unuse "$build/modulefiles"

# The module's variables and those the build and test scripts read are apart: loading pfc
# must not change how pfc is built (build parallelism is CMAKE_BUILD_PARALLEL_LEVEL).
read_by_scripts=$(grep -ohE '\$\{?[A-Z][A-Z0-9_]+' "$src/jobs/build.sh" "$src/jobs/local.sh" \
  "$src/tests/run.sh" | tr -d '${' | sort -u)
collisions=$(comm -12 <(echo "$set_by_module" | sort -u) <(echo "$read_by_scripts"))
[[ -z $collisions ]] || fail "the module sets what the build scripts read: $collisions"
grep -q CMAKE_BUILD_PARALLEL_LEVEL "$src/jobs/build.sh" ||
  fail "jobs/build.sh does not take its parallelism from CMAKE_BUILD_PARALLEL_LEVEL"
echo "module sets: $(echo $set_by_module); build scripts read: $(echo $read_by_scripts)"

# An installed tree, its modulefile copied into a site's module tree elsewhere.
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install (it needs every installed target built)"; }
installed=$prefix/modulefiles/pfc/$version.lua
[[ -f $installed ]] || fail "cmake --install did not write $installed"
grep -q "^-- depends_on(\"hdf5/" "$installed" || fail "no depends_on lines for a site to fill"
mkdir -p "$tmp/site/pfc"
cp "$installed" "$tmp/site/pfc/"
module use "$tmp/site"
module load "pfc/$version"
check_module "$prefix" "$prefix/bin" "$prefix/share/pfc/jobs" "$prefix/share/pfc/input"
module unload pfc
[[ :$PATH: != *":$prefix/bin:"* ]] || fail "unloading left $prefix/bin on PATH"
echo "modules: ok"
