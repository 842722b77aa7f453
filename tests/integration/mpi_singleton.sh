#!/usr/bin/env bash
# A pfc started without a launcher is an MPI world of one (a singleton), and must not need Open
# MPI's orted, which a machine that has only the MPI library lacks (an installed tree carried to
# a GPU node): with orted hidden (an empty device bound over it in a mount namespace of this
# test's own) `pfc info` runs; turning the isolation off by hand makes it fail, so the check
# tells the two apart. Needs user and mount namespaces (unshare -rm); skipped without them.
set -uo pipefail
orted=$(command -v orted) || { echo "skipped: no orted here to hide"; exit 77; }
if [ "${1:-}" != --in-namespace ]; then
  if ! unshare -rm mount --bind /dev/null "$orted" 2>/dev/null; then
    echo "skipped: cannot bind-mount over $orted in a user namespace (unshare -rm)"
    exit 77
  fi
  exec unshare -rm bash "$0" --in-namespace
fi
. "$(dirname "${BASH_SOURCE[0]}")/check_support.sh"
mount --bind /dev/null "$orted" || { echo "FAIL: cannot hide $orted"; exit 1; }
unset OMPI_MCA_ess_singleton_isolated

expect_exit 0 info_without_orted "backends: cpu" -- "$PFC" info
expect_exit 0 train_without_orted "Global Step: 2" -- "$PFC" train \
  "${PFC_SOURCE_DIR:?}/input/smoke.toml" --set steps=2 --set frequent=1 \
  --set checkpoint_every=-1 --set "output=\"$work/run\""
# The user's own setting stays: isolation off needs orted, and fails without it.
OMPI_MCA_ess_singleton_isolated=0 "$PFC" info >"$work/not_isolated.log" 2>&1 &&
  fail "pfc info ran without orted with the isolation turned off: the check proves nothing"

[ $failures -eq 0 ]
