#!/usr/bin/env bash
# Configuring the CUDA build (cmake/Cuda.cmake) as a cluster user would: NCCL_ROOT (as a module
# sets it) is where NCCL is taken from, ahead of the toolkit's copy; with PFC_CUDA=ON a cuDNN
# that is not there is a configure error naming it; so is a CMAKE_CUDA_ARCHITECTURES entry
# this nvcc cannot build. Skipped (77) in a CPU-only build.
set -uo pipefail

build=${PFC_BINARY_DIR:?PFC_BINARY_DIR must name the build folder}
src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/check_support.sh"
cache=$build/CMakeCache.txt
nvcc=$(sed -n 's/^PFC_CUDA_COMPILER:INTERNAL=//p' "$cache")
nccl_header=$(sed -n 's/^NCCL_INCLUDE_DIR:PATH=//p' "$cache")/nccl.h
nccl_library=$(sed -n 's/^NCCL_LIBRARY:FILEPATH=//p' "$cache")
[[ -x $nvcc && -f $nccl_header && -f $nccl_library ]] ||
  { echo "CPU-only build: nothing to configure"; exit 77; }
configure() {  # configure DIR ARGS...: a fresh configure of this source tree, tests off
  local dir=$1
  shift
  cmake -S "$src" -B "$dir" -DCMAKE_CUDA_COMPILER="$nvcc" -DBUILD_TESTING=OFF "$@" \
    >"$dir.log" 2>&1
}

# A module's NCCL: a prefix with include/ and lib/.
mkdir -p "$work/nccl/include" "$work/nccl/lib"
cp "$nccl_header" "$work/nccl/include/"
ln -s "$(readlink -f "$nccl_library")" "$work/nccl/lib/libnccl.so"
NCCL_ROOT=$work/nccl configure "$work/with_root" -DPFC_CUDA=ON ||
  fail "configure with NCCL_ROOT: $(tail -n 5 "$work/with_root.log")"
grep -q "pfc: CUDA backend ON: .*NCCL [0-9.]* ($work/nccl/lib/libnccl.so)" "$work/with_root.log" ||
  fail "NCCL was not taken from NCCL_ROOT: $(grep 'pfc:' "$work/with_root.log")"

configure "$work/missing" -DPFC_CUDA=ON -DCUDNN_INCLUDE_DIR="$work/no_cudnn" &&
  fail "PFC_CUDA=ON without cuDNN configured"
grep -q "PFC_CUDA=ON but not found: cuDNN" "$work/missing.log" ||
  fail "the error does not name cuDNN: $(cat "$work/missing.log")"

# A GPU code this nvcc cannot build (Volta, with CUDA 13) is refused before nvcc is tried.
if ! grep -qx sm_70 <<<"$("$nvcc" --list-gpu-code)"; then
  configure "$work/volta" -DCMAKE_CUDA_ARCHITECTURES="70;90" &&
    fail "CMAKE_CUDA_ARCHITECTURES=70;90 configured with an nvcc that cannot build sm_70"
  grep -q "CMAKE_CUDA_ARCHITECTURES asks for 70, which this nvcc" "$work/volta.log" ||
    fail "no message naming the architecture: $(cat "$work/volta.log")"
fi

((failures == 0)) && echo "CUDA configure: NCCL_ROOT honoured, a missing cuDNN named"
