#!/usr/bin/env python3
"""Plots the benchmark tables: speed and memory per GPU against identities, one line per
method (DP, MP, PFC 0.1, ...), ours solid and the seed's (8 x V100-32GB) dashed; and, for runs
that verified val_targets while training, verification accuracy against step.

Usage:
    build/bin/pfc report output/bench --csv output/bench/report.csv
    python3 jobs/plot_report.py output/bench/report.csv --out output/bench/plots
writes speed.png and memory.png under --out (default: the CSV's folder).

The title says where our figures come from (device, ranks, emulated or not) and the network.
For emulated runs the speed drawn is the one with the modelled communication added
(samples_per_s_with_comm), the figure to hold against the seed's measured one. A cell without
figures is a gap in its line, never a 0: a vertical line marks it, dotted where the run did not
fit, dash-dotted where it stopped before a timed step (not measured), dashed where it failed;
each has its legend entry.

    build/bin/pfc report output/run --verification-csv output/run/verification.csv
    python3 jobs/plot_report.py --verification output/run/verification.csv
writes accuracy.png (Accuracy-Flip, mean and +-std over the folds, per run and target).

    build/bin/pfc ijb output/run IJB_C_ROOT --target IJBC
    python3 jobs/plot_report.py --ijb output/run/ijbc_step_*.h5 --out output/run
writes roc.png: the ROC of each `pfc ijb` result, TAR against FAR on a log axis, as
eval_ijbc.py draws it (needs h5py, python3-h5py).
Needs matplotlib (python3-matplotlib); the CSVs' columns are documented in
src/io/report_format.h and src/io/report_verification.h, pfc ijb's file in
src/io/ijb_result_file.h.
"""
import argparse
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on cluster nodes
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

SPEED, MEMORY = "speed", "memory"
FIGURES = (
    (SPEED, "speed.png", "seed_samples_per_s", "samples/s (all GPUs)", "Training speed"),
    (MEMORY, "memory.png", "seed_mem_gb", "GB per GPU (1 GB = 1e9 bytes)", "GPU memory"),
)
# How a cell without figures is marked: (line style, words in the legend).
GAPS = {
    "out_of_memory": (":", "did not fit"),
    "not_measured": ("-.", "not measured"),
    "failed": ("--", "failed"),
}


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "identities" not in rows[0]:
        sys.exit(f"plot_report: {path} is not a CSV written by `pfc report --csv`")
    return rows


def emulated(row):
    return row.get("emulated") == "1"


def our_value(row, figure):
    """Our figure for a cell, or None when the run has none."""
    if figure == SPEED:
        key = "samples_per_s_with_comm" if emulated(row) else "samples_per_s"
    else:
        key = "mem_device_gb" if row.get("mem_device_gb") else "mem_peak_gb"
    text = row.get(key, "")
    return float(text) if text else None


def gap_kind(row):
    """Why a cell with a run has no figure: out_of_memory, failed or not_measured."""
    if row["status"] in ("out_of_memory", "failed"):
        return row["status"]
    return "not_measured"


def series(rows, column, figure, seed_key):
    """One column's lines: ours as (identities, value) with NaN where a run has no figure (a
    gap), the seed's, and the identities of each kind of gap."""
    ours, seed, gaps = [], [], {kind: [] for kind in GAPS}
    for row in rows:
        if row["column"] != column:
            continue
        n = int(row["identities"])
        if row[seed_key]:
            seed.append((n, float(row[seed_key])))
        if row["status"] == "missing":
            continue  # no run of ours in this cell
        value = our_value(row, figure)
        ours.append((n, math.nan if value is None else value))
        if value is None:
            gaps[gap_kind(row)].append(n)
    return sorted(ours), sorted(seed), gaps


def setups(rows):
    """'8 ranks emulated on NVIDIA H200, r50' for each distinct setup and network measured."""
    seen = []
    for row in rows:
        if row["status"] == "missing" or not row.get("setup"):
            continue
        text = f"{row['setup']}, {row['network']}" if row.get("network") else row["setup"]
        if text not in seen:
            seen.append(text)
    return "; ".join(seen) if seen else "no runs"


def draw(rows, figure, seed_key, ylabel, title):
    """One figure (SPEED or MEMORY) with every column's lines, gaps and legend."""
    columns = list(dict.fromkeys(row["column"] for row in rows))
    any_emulated = any(emulated(row) for row in rows if row["status"] != "missing")
    fig, ax = plt.subplots(figsize=(10, 5))
    for i, column in enumerate(columns):
        colour = f"C{i}"
        ours, seed, gaps = series(rows, column, figure, seed_key)
        if any(not math.isnan(v) for _, v in ours):
            ax.plot(*zip(*ours), "o-", color=colour, label=f"{column} (ours)")
        if seed:
            ax.plot(*zip(*seed), "s--", color=colour, alpha=0.6, label=f"{column} (seed)")
        for kind, (style, words) in GAPS.items():
            for k, n in enumerate(gaps[kind]):
                ax.axvline(n, color=colour, linestyle=style, alpha=0.6,
                           label=f"{column}: {words} (ours)" if k == 0 else None)
    ax.set_xscale("log")
    ax.set_xlabel("identities")
    ax.set_ylabel(ylabel)
    subtitle = f"ours: {setups(rows)}"
    if figure == SPEED and any_emulated:
        subtitle += "\nemulated runs: compute plus the modelled communication"
    ax.set_title(f"{title}: ours (solid) vs seed 8 x V100-32GB (dashed)\n{subtitle}",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    # Beside the axes: inside, it would cover the points of the smallest identity counts.
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def plot(rows, out_dir):
    written = []
    for figure, name, seed_key, ylabel, title in FIGURES:
        fig = draw(rows, figure, seed_key, ylabel, title)
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written


VERIFICATION_COLUMNS = ("path", "target", "step", "accuracy", "accuracy_std")


def read_verification(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and not all(c in rows[0] for c in VERIFICATION_COLUMNS):
        sys.exit(f"plot_report: {path} is not a CSV written by `pfc report --verification-csv`")
    return rows


def plot_verification(rows, out_dir):
    """accuracy.png: Accuracy-Flip against step, one line (and its +-std band) per run/target."""
    series = {}
    for row in rows:
        key = (row["path"], row["target"])
        series.setdefault(key, []).append(
            (int(row["step"]), float(row["accuracy"]), float(row["accuracy_std"])))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    several_runs = len({path for path, _ in series}) > 1
    for i, ((path, target), points) in enumerate(sorted(series.items())):
        points.sort()
        steps, acc, std = zip(*points)
        label = f"{target} ({os.path.dirname(path)})" if several_runs else target
        ax.plot(steps, acc, "o-", color=f"C{i}", label=label)
        ax.fill_between(steps, [a - s for a, s in zip(acc, std)],
                        [a + s for a, s in zip(acc, std)], color=f"C{i}", alpha=0.2)
    ax.set_xlabel("step")
    ax.set_ylabel("verification accuracy (flip, 10 folds)")
    ax.set_title("Accuracy-Flip against step (band: +-std over folds)")
    ax.grid(True, alpha=0.3)
    if series:
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "accuracy.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


IJB_FARS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]


def read_ijb(path):
    """(label, fpr, tpr, auc) of a file `pfc ijb` wrote."""
    import h5py  # only here: the other figures read CSVs
    with h5py.File(path, "r") as f:
        if "ijb_target" not in f.attrs:
            sys.exit(f"plot_report: {path} is not a file written by `pfc ijb`")
        label = f"{f.attrs['ijb_target']} step {int(f.attrs['step'])} ({os.path.basename(path)})"
        return label, f["roc/fpr"][:], f["roc/tpr"][:], float(f.attrs["auc"])


def plot_ijb(paths, out_dir):
    """roc.png: eval_ijbc.py's figure, one curve per result, FAR on a log axis."""
    fig, ax = plt.subplots(figsize=(7, 5))
    # The script's TPR axis starts at 0.3; lower when a curve runs below it (a weak network),
    # so that every curve shows.
    bottom = 0.3
    for i, path in enumerate(paths):
        label, fpr, tpr, roc_auc = read_ijb(path)
        ax.plot(fpr, tpr, color=f"C{i}", lw=1, label=f"[{label} (AUC = {roc_auc * 100:.4f} %)]")
        shown = tpr[(fpr >= IJB_FARS[0]) & (fpr <= IJB_FARS[-1])]
        if len(shown):
            bottom = min(bottom, math.floor(float(shown.min()) * 10) / 10)
    ax.set_xlim([IJB_FARS[0], IJB_FARS[-1]])
    ax.set_ylim([bottom, 1.0])
    ax.grid(linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xticks(IJB_FARS)
    ax.set_yticks([round(bottom + 0.1 * k, 1) for k in range(round((1.0 - bottom) * 10) + 1)])
    ax.set_xlabel("False Positive Rate")
    ax.set_ylabel("True Positive Rate")
    ax.set_title("ROC on IJB")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    path = os.path.join(out_dir, "roc.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="?", help="CSV written by `pfc report --csv FILE`")
    parser.add_argument("--verification",
                        help="CSV written by `pfc report --verification-csv FILE`")
    parser.add_argument("--ijb", nargs="+", metavar="RESULT.h5",
                        help="files written by `pfc ijb`: their ROC in roc.png")
    parser.add_argument("--out", help="folder for the PNGs (default: the first input's folder)")
    args = parser.parse_args()
    if not args.csv and not args.verification and not args.ijb:
        parser.error("give the report CSV, --verification CSV, --ijb files, or several")
    first = args.csv or args.verification or args.ijb[0]
    out_dir = args.out or os.path.dirname(os.path.abspath(first))
    os.makedirs(out_dir, exist_ok=True)
    if args.csv:
        for path in plot(read_rows(args.csv), out_dir):
            print(path)
    if args.verification:
        print(plot_verification(read_verification(args.verification), out_dir))
    if args.ijb:
        print(plot_ijb(args.ijb, out_dir))


if __name__ == "__main__":
    main()
