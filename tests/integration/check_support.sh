# Sourced by the integration scripts that check many things in one run: a scratch folder
# ($work) removed on exit, and fail(), which reports a failed check and counts it so that one
# run shows every problem; the script ends with `[ $failures -eq 0 ]`.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
# expect_exit CODE NAME PATTERN... -- CMD...: CMD exits with CODE and its output (stdout and
# stderr, kept in $work/NAME.log) holds every PATTERN (fixed strings).
expect_exit() {
  local code=$1 name=$2
  shift 2
  local patterns=()
  while [ "$1" != "--" ]; do
    patterns+=("$1")
    shift
  done
  shift
  local got=0
  "$@" >"$work/$name.log" 2>&1 || got=$?
  if [ "$got" -ne "$code" ]; then
    fail "$name: exit code $got, expected $code"
    tail -n 20 "$work/$name.log"
    return
  fi
  local pattern
  for pattern in "${patterns[@]}"; do
    if ! grep -qF -- "$pattern" "$work/$name.log"; then
      fail "$name: the output lacks '$pattern'"
      tail -n 20 "$work/$name.log"
      return
    fi
  done
  echo "ok   $name (exit $code)"
}
