#!/usr/bin/env bash
# Configures and builds pfc into ${PFC_BUILD_DIR:-build}; used by jobs/local.sh and
# tests/run.sh, safe to re-run. On Debian/Ubuntu (dpkg and apt-get present) it first installs
# the build dependencies that are missing; elsewhere (a site with modules: RHEL, SUSE, ...) it
# builds with what CMake finds and says so — load the compiler, MPI, HDF5 and CUDA modules
# first (README.md, "Building on a cluster"). Parallel jobs: CMAKE_BUILD_PARALLEL_LEVEL (CMake's
# own variable; default: every CPU). Other variables: PFC_BUILD_TYPE (Release), PFC_CMAKE_ARGS
# (more -D options), PFC_EXTRA_PACKAGES (more Debian packages).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make libopenmpi-dev openmpi-bin libhdf5-dev hdf5-tools libcli11-dev
          libtomlplusplus-dev libspdlog-dev libfmt-dev libgtest-dev libopenblas-dev
          libturbojpeg0-dev libpng-dev libdnnl-dev libonnx-dev libprotobuf-dev libzip-dev python3
          python3-venv python3-h5py python3-numpy ${PFC_EXTRA_PACKAGES:-})
if command -v dpkg-query >/dev/null && command -v apt-get >/dev/null; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "pfc: installing ${missing[*]}"
    sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
else
  echo "pfc: no apt here; building with what CMake finds (README.md lists what pfc needs)"
fi

build_dir=${PFC_BUILD_DIR:-build}
read -r -a cmake_args <<<"${PFC_CMAKE_ARGS:-}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${PFC_BUILD_TYPE:-Release}" "${cmake_args[@]}" \
  >/dev/null
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} cmake --build "$build_dir"
