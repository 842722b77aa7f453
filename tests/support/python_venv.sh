#!/usr/bin/env bash
# Usage: python_venv.sh NAME PACKAGE...
# Prints the python of a virtual environment holding PACKAGE... (from PyPI), made once under
# the build folder and reused: $PFC_BINARY_DIR/NAME-venv. Tests that need a peer from PyPI
# (onnxruntime, PyTorch, OpenCV) call it; nothing is installed into the system's Python. Exit
# 77 (the caller skips) only when PyPI cannot be reached; any other failure (no venv module, a
# broken install) is exit 1 with pip's words.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: python_venv.sh NAME PACKAGE..." >&2; exit 1; }
name=$1
shift
venv=${PFC_BINARY_DIR:?PFC_BINARY_DIR is not set}/$name-venv
python=$venv/bin/python3
# What was asked for, so that a venv made for another package list is made again.
wanted="$*"
mkdir -p "$(dirname "$venv")"
# Tests run in parallel (ctest -j): one makes the environment, the others wait for it.
exec 9>"$venv.lock"
flock 9
if [ -x "$python" ] && [ "$(cat "$venv/pfc-packages" 2>/dev/null)" = "$wanted" ]; then
  echo "$python"
  exit 0
fi
rm -rf "$venv"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! python3 -m venv "$venv" >"$log" 2>&1; then
  cat "$log" >&2
  echo "python_venv: python3 -m venv failed (Debian: python3-venv)" >&2
  exit 1
fi
if ! "$python" -m pip install --disable-pip-version-check --retries 2 --timeout 30 -q \
    "$@" >"$log" 2>&1; then
  cat "$log" >&2
  rm -rf "$venv"
  # pip's words when no index answers (name resolution, connection, proxy or read failures).
  # An index that answers without a wheel for this python is a failure, not a skip.
  if grep -qiE "NewConnectionError|ConnectTimeout|ReadTimeout|ProxyError|Temporary failure \
in name resolution|Network is unreachable|Failed to establish" "$log"; then
    echo "python_venv: PyPI cannot be reached; the checks that need $* are skipped" >&2
    exit 77
  fi
  echo "python_venv: pip could not install $*" >&2
  exit 1
fi
echo "$wanted" >"$venv/pfc-packages"
echo "$python"
