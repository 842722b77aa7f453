#!/usr/bin/env bash
# pfc train --outcome-file never replaces what is not pfc's own: a FIFO is written in place
# (its reader gets "done 2"), a symbolic link keeps naming its file (which gets the outcome), a
# device is written in place (a full one, made with mknod where that is allowed: "No space left
# on device", the device still a device). A path that cannot take the file (a folder, a missing
# folder) is refused, exit 2, before the run starts.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/check_support.sh"
cd "${PFC_SOURCE_DIR:?}"
[ -n "${PFC:-}" ] && [ -x "$PFC" ] || { echo "skipped: \$PFC is not built"; exit 77; }
export OMP_NUM_THREADS=1
train() {  # train NAME OUTCOME_FILE: two steps into $work/runs/NAME
  "$PFC" train input/smoke.toml --set steps=2 --set checkpoint_every=-1 \
    --set output=\""$work/runs/$1"\" --outcome-file "$2"
}

# ---- refused before the run -------------------------------------------------------------------
expect_exit 2 missing_folder "--outcome-file '$work/none/outcome'" "does not exist" -- \
  train refused1 "$work/none/outcome"
expect_exit 2 folder "--outcome-file '$work' is a folder" -- train refused2 "$work"
[ ! -e "$work/runs" ] || fail "a refused run wrote its output"

# ---- a FIFO: written in place ------------------------------------------------------------------
mkfifo "$work/fifo"
timeout 300 cat "$work/fifo" >"$work/fifo.read" &
reader=$!
expect_exit 0 fifo "" -- train fifo "$work/fifo"
wait "$reader"
[ -p "$work/fifo" ] || fail "the FIFO was replaced"
[ "$(cat "$work/fifo.read")" = "done 2" ] || fail "the FIFO's reader got '$(cat "$work/fifo.read")'"

# ---- a link: the file it names gets the outcome --------------------------------------------------
mkdir "$work/real"
printf 'old\n' >"$work/real/outcome"
ln -s real/outcome "$work/link"
ln -s real/later "$work/dangling"
expect_exit 0 link "" -- train link "$work/link"
expect_exit 0 dangling "" -- train dangling "$work/dangling"
[ -L "$work/link" ] && [ -L "$work/dangling" ] || fail "a link was replaced by a file"
[ "$(cat "$work/real/outcome")" = "done 2" ] ||
  fail "the linked file holds '$(cat "$work/real/outcome")'"
[ "$(cat "$work/real/later")" = "done 2" ] || fail "the dangling link's target was not written"

# ---- a device: written in place, never replaced ------------------------------------------------
full=
if mknod "$work/full" c 1 7 2>/dev/null && [ -c "$work/full" ]; then
  full=$work/full
elif [ "$(id -u)" != 0 ] && [ -c /dev/full ]; then
  full=/dev/full  # only root could replace it
fi
if [ -n "$full" ]; then
  expect_exit 1 device "cannot write '$full': No space left on device" -- train device "$full"
  [ -c "$full" ] || fail "$full is no longer a device"
else
  echo "skip device: no full device to write to"
fi
[ "$failures" -eq 0 ]
