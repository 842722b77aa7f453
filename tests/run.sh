#!/usr/bin/env bash
# Builds pfc (installing what is missing) and runs its tests: unit, mpi and integration;
# gpu tests skip themselves without a GPU; `slow` ones run only with PFC_SLOW_TESTS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
PFC_EXTRA_PACKAGES="${PFC_EXTRA_PACKAGES:-} lmod munge slurm-wlm slurm-wlm-basic-plugins python3-matplotlib" \
  jobs/build.sh
exclude=(-LE slow)
[ "${PFC_SLOW_TESTS:-0}" = 1 ] && exclude=()
cd "${PFC_BUILD_DIR:-build}"
ctest --output-on-failure -j "${PFC_TEST_JOBS:-2}" "${exclude[@]}" "$@"
