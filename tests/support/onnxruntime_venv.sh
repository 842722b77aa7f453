#!/usr/bin/env bash
# Prints the python of a virtual environment with onnxruntime (from PyPI), made once under
# the build folder and reused: ${1:-$PFC_BINARY_DIR/onnxruntime-venv}. Tests that run
# exported ONNX models call it. Exit 77 (the caller skips) only when PyPI cannot be reached;
# any other failure (no venv module, a broken install) is exit 1 with pip's words.
set -euo pipefail
venv=${1:-${PFC_BINARY_DIR:?PFC_BINARY_DIR is not set}/onnxruntime-venv}
python=$venv/bin/python3
mkdir -p "$(dirname "$venv")"
# Tests run in parallel (ctest -j): one makes the environment, the others wait for it.
exec 9>"$venv.lock"
flock 9
if [ -x "$python" ] && "$python" -c "import onnxruntime, numpy" 2>/dev/null; then
  echo "$python"
  exit 0
fi
rm -rf "$venv"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! python3 -m venv "$venv" >"$log" 2>&1; then
  cat "$log" >&2
  echo "onnxruntime_venv: python3 -m venv failed (Debian: python3-venv)" >&2
  exit 1
fi
if ! "$python" -m pip install --disable-pip-version-check --retries 2 --timeout 30 -q \
    onnxruntime numpy >"$log" 2>&1; then
  cat "$log" >&2
  rm -rf "$venv"
  # pip's words when no index answers (name resolution, connection, proxy or read failures).
  # An index that answers without a wheel for this python is a failure, not a skip.
  if grep -qiE "NewConnectionError|ConnectTimeout|ReadTimeout|ProxyError|Temporary failure \
in name resolution|Network is unreachable|Failed to establish" "$log"; then
    echo "onnxruntime_venv: PyPI cannot be reached; the ONNX runtime checks are skipped" >&2
    exit 77
  fi
  echo "onnxruntime_venv: pip could not install onnxruntime" >&2
  exit 1
fi
echo "$python"
