#!/usr/bin/env bash
# jobs/plot_report.py on the CSV of `pfc report` for tiny CPU runs: a measured one, one stopped
# before a timed step (one logged row), an emulated one, and a cell that did not fit (a CSV line
# as pfc report writes it for out_of_memory). Both PNGs are written; the not-measured cell is a
# gap (NaN), not 0; the emulated cell is drawn with the modelled communication; every kind of
# mark has a legend entry; the title names the setup and the network. Skips (77) when
# /usr/bin/python3 lacks matplotlib (python3-matplotlib).
set -euo pipefail

src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
pfc=${PFC:?PFC must name the pfc executable}
python=/usr/bin/python3
"$python" -c 'import matplotlib' 2>/dev/null || { echo "skip: $python has no matplotlib"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pfc_plot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

train() {  # train CELL STEPS [--set ...]
  local cell=$1 steps=$2
  shift 2
  "$pfc" train "$src/input/smoke.toml" --set steps="$steps" --set frequent=2 \
    --set checkpoint_every=-1 --set output="$tmp/bench/$cell" "$@" >"$tmp/train.log" 2>&1 ||
    { cat "$tmp/train.log"; exit 1; }
}
train row_0125k/pfc 6 --set num_classes=125000 --set sample_rate=0.1
train row_0250k/pfc 2 --set num_classes=250000 --set sample_rate=0.1  # one row: warm-up only
train row_0500k/mp 6 --set num_classes=500000 --set method=mp --set sample_rate=1.0 \
  --set emulate_world_size=8
"$pfc" report "$tmp/bench" --format csv >"$tmp/report.csv"
# As pfc report writes a cell that did not fit (status out_of_memory, needed and available GB).
sed -i 's|^1000000,DP,missing,,2090,,23.708,,,|1000000,DP,out_of_memory,,2090,,23.708,90.000,80.000|' \
  "$tmp/report.csv"
grep -q '^1000000,DP,out_of_memory' "$tmp/report.csv" || { echo "FAIL: no OOM line made"; exit 1; }

"$python" "$src/jobs/plot_report.py" "$tmp/report.csv" --out "$tmp/plots"
for png in speed memory; do
  [[ $(head -c 4 "$tmp/plots/$png.png" | od -An -c | tr -d ' ') == '211PNG' ]] ||
    { echo "FAIL: $png.png is not a PNG"; exit 1; }
done
"$python" - "$src/jobs" "$tmp/report.csv" <<'PY'
import math, sys
sys.path.insert(0, sys.argv[1])
import plot_report as p

rows = p.read_rows(sys.argv[2])
ours, _, gaps = p.series(rows, "PFC 0.1", p.SPEED, "seed_samples_per_s")
values = dict(ours)
assert values[125000] > 0, values
assert math.isnan(values[250000]), f"not measured must be a gap, got {values[250000]}"
assert gaps["not_measured"] == [250000], gaps
mp = next(r for r in rows if r["column"] == "MP" and r["identities"] == "500000")
assert mp["emulated"] == "1" and float(mp["samples_per_s_with_comm"]) < float(mp["samples_per_s"])
ours_mp, _, _ = p.series(rows, "MP", p.SPEED, "seed_samples_per_s")
assert dict(ours_mp)[500000] == float(mp["samples_per_s_with_comm"]), ours_mp
_, _, dp_gaps = p.series(rows, "DP", p.MEMORY, "seed_mem_gb")
assert dp_gaps["out_of_memory"] == [1000000], dp_gaps
for figure, _, seed_key, ylabel, title in p.FIGURES:
    fig = p.draw(rows, figure, seed_key, ylabel, title)
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    for wanted in ("PFC 0.1 (ours)", "PFC 0.1 (seed)", "PFC 0.1: not measured (ours)",
                   "DP: did not fit (ours)", "MP (ours)"):
        assert wanted in labels, (figure, wanted, labels)
    # Every line drawn has its entry in the legend.
    assert all(not line.get_label().startswith("_") for line in ax.get_lines()), labels
    heading = ax.get_title()
    for words in ("8 ranks emulated on cpu, custom", "1 rank on cpu, custom"):
        assert words in heading, (figure, heading)
    if figure == p.SPEED:
        assert "modelled communication" in heading, heading
print("plot: gaps, emulated speed, legend and title checked")
PY
"$python" "$src/jobs/plot_report.py" "$tmp/train.log" 2>/dev/null &&
  { echo "FAIL: a file that is not the report's CSV was accepted"; exit 1; }
echo "plot: ok"
