#!/usr/bin/env bash
# jobs/plot_report.py on the CSV of `pfc report` for one tiny CPU run: both PNGs written.
# Skips (77) when /usr/bin/python3 lacks matplotlib (python3-matplotlib).
set -euo pipefail

src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
pfc=${PFC:?PFC must name the pfc executable}
python=/usr/bin/python3
"$python" -c 'import matplotlib' 2>/dev/null || { echo "skip: $python has no matplotlib"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pfc_plot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$pfc" train "$src/input/smoke.toml" --set num_classes=125000 --set sample_rate=0.1 \
  --set steps=4 --set frequent=2 --set checkpoint_every=0 \
  --set output="$tmp/bench/row_0125k/pfc" >"$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; exit 1; }
"$pfc" report "$tmp/bench" --format csv >"$tmp/report.csv"
"$python" "$src/jobs/plot_report.py" "$tmp/report.csv" --out "$tmp/plots"
for png in speed memory; do
  [[ $(head -c 4 "$tmp/plots/$png.png" | od -An -c | tr -d ' ') == '211PNG' ]] ||
    { echo "FAIL: $png.png is not a PNG"; exit 1; }
done
"$python" "$src/jobs/plot_report.py" "$tmp/train.log" 2>/dev/null &&
  { echo "FAIL: a file that is not the report's CSV was accepted"; exit 1; }
echo "plot: ok"
