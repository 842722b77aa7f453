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
