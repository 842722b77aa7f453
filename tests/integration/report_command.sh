#!/usr/bin/env bash
# `pfc report` end to end: two tiny CPU runs (PFC 0.1 and MP at 125 000 identities, the seed's
# first row) write metrics.h5; the report places them beside the seed's figures in Markdown
# and CSV, and names what is wrong when there is nothing to report.
set -euo pipefail

src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
pfc=${PFC:?PFC must name the pfc executable}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pfc_report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for method in pfc mp; do
  rate=1.0
  [[ $method == pfc ]] && rate=0.1
  "$pfc" train "$src/input/smoke.toml" --set method=$method --set sample_rate=$rate \
    --set num_classes=125000 --set steps=4 --set frequent=2 --set checkpoint_every=0 \
    --set output="$tmp/bench/row_0125k/$method" >"$tmp/train_$method.log" 2>&1 ||
    { cat "$tmp/train_$method.log"; fail "training $method failed"; }
done

"$pfc" report "$tmp/bench" --csv "$tmp/report.csv" | tee "$tmp/report.md"
grep -q '^| identities | DP | DP seed | MP | MP seed | PFC 0.1 | PFC 0.1 seed |$' "$tmp/report.md" ||
  fail "no table header"
# Ours (a number) beside the seed's 4824 (MP) and 5004 (PFC 0.1); no DP run: "–" beside 4681.
grep -Eq '^\| 125 000 \| – \| 4681 \| [0-9]+ \| 4824 \| [0-9]+ \| 5004 \|$' "$tmp/report.md" ||
  fail "the 125 000 speed row"
grep -Eq '^\| 125 000 \| – \| 7\.4 \| [0-9]+\.[0-9] \| 5\.3 \| [0-9]+\.[0-9] \| 4\.9 \|$' \
  "$tmp/report.md" || fail "the 125 000 memory row"
grep -q '^| 29 000 000 | – | – | – | – | – | 1855 |$' "$tmp/report.md" || fail "the 29M row"
grep -q '2 run(s): 1 rank on cpu' "$tmp/report.md" || fail "the setup line"

grep -q '^identities,column,status,samples_per_s,' "$tmp/report.csv" || fail "CSV header"
grep -q '^125000,PFC 0.1,ok,[0-9.]*,5004,' "$tmp/report.csv" || fail "CSV PFC cell"
grep -q '^125000,MP,ok,[0-9.]*,4824,' "$tmp/report.csv" || fail "CSV MP cell"
grep -q '^125000,DP,missing,,4681,' "$tmp/report.csv" || fail "CSV missing DP cell"
"$pfc" report "$tmp/bench" --format csv | cmp - "$tmp/report.csv" || fail "--format csv differs from --csv"
grep -q '^125000,MP,ok' <<<"$("$pfc" report "$tmp/bench" --format both)" || fail "--format both"

mkdir "$tmp/empty"
set +e
"$pfc" report "$tmp/empty" >/dev/null 2>"$tmp/err.txt"
rc_empty=$?
"$pfc" report "$tmp/absent" >/dev/null 2>&1
rc_absent=$?
"$pfc" report "$tmp/bench" --format html >/dev/null 2>&1
rc_format=$?
set -e
((rc_empty == 1)) && grep -q 'no readable metrics.h5' "$tmp/err.txt" ||
  fail "empty folder: exit $rc_empty, $(cat "$tmp/err.txt")"
((rc_absent == 2)) || fail "absent folder: exit $rc_absent, expected 2"
((rc_format == 2)) || fail "--format html: exit $rc_format, expected 2"
echo "report: ok"
