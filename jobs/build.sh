#!/usr/bin/env bash
# Installs pfc's Debian build dependencies when they are missing, then configures and builds
# into ${PFC_BUILD_DIR:-build}. Used by jobs/local.sh and tests/run.sh; safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make libopenmpi-dev openmpi-bin libhdf5-dev hdf5-tools libcli11-dev
          libtomlplusplus-dev libspdlog-dev libfmt-dev libgtest-dev libopenblas-dev
          libturbojpeg0-dev libonnx-dev libprotobuf-dev python3 python3-venv python3-h5py
          python3-numpy ${PFC_EXTRA_PACKAGES:-})
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "pfc: installing ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

build_dir=${PFC_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=${PFC_BUILD_TYPE:-Release} ${PFC_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "${PFC_JOBS:-$(nproc)}"
