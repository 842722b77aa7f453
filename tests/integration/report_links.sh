#!/usr/bin/env bash
# pfc report searches folders without following links to folders: a folder holding a
# `self -> .` link and a link to `/` is reported at once (one run, found once), and a search
# from `/` ends with a report or "no readable metrics.h5", never a loop error.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/check_support.sh"
cd "${PFC_SOURCE_DIR:?}"
[ -n "${PFC:-}" ] && [ -x "$PFC" ] || { echo "skipped: \$PFC is not built"; exit 77; }

"$PFC" plan input/smoke.toml --set output=\""$work/runs/a"\" >"$work/plan.log" 2>&1 ||
  { fail "pfc plan"; cat "$work/plan.log"; }
ln -s . "$work/runs/self"
ln -s / "$work/runs/root"
ln -s ../runs "$work/runs/a/up"
expect_exit 0 self_link "1 run(s)" -- timeout 60 "$PFC" report "$work/runs"
grep -q "unexpected failure\|Too many levels" "$work/self_link.log" && fail "a loop error"

# From /: whatever the machine holds, an answer and no loop error.
timeout 600 "$PFC" report / >"$work/root.log" 2>&1
rc=$?
if [ "$rc" -gt 1 ] || grep -q "unexpected failure\|Too many levels" "$work/root.log"; then
  fail "pfc report / exited $rc"
  tail -n 5 "$work/root.log"
fi
[ "$failures" -eq 0 ]
