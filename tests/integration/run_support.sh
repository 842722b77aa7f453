# Sourced by the integration scripts that train and read the outputs back with h5py: skips the
# script (77) without h5py, then gives check_support.sh's $work, fail() and expect_exit, $here
# (this folder) and inspect (inspect_run.py), and moves to the source tree.
python=/usr/bin/python3
if ! "$python" -c 'import h5py' 2>/dev/null; then
  echo "skipped: $python cannot import h5py"
  exit 77
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/check_support.sh"
inspect() { "$python" "$here/inspect_run.py" "$@"; }
# kept_log BEFORE RUN: RUN/training.log still begins with the copy BEFORE (attempts append).
kept_log() {
  cmp -s "$1" <(head -c "$(stat -c %s "$1")" "$2/training.log") ||
    fail "$2/training.log lost what it held"
}
cd "${PFC_SOURCE_DIR:?}"
