#!/usr/bin/env python3
"""Plots the benchmark tables: speed and memory per GPU against identities, one line per
method (DP, MP, PFC 0.1, ...), ours solid and the seed's (8 x V100-32GB) dashed; and, for runs
that verified val_targets while training, verification accuracy against step.

Usage:
    build/bin/pfc report output/bench --csv output/bench/report.csv
    python3 jobs/plot_report.py output/bench/report.csv --out output/bench/plots
writes speed.png and memory.png under --out (default: the CSV's folder).
    build/bin/pfc report output/run --verification-csv output/run/verification.csv
    python3 jobs/plot_report.py --verification output/run/verification.csv
writes accuracy.png (Accuracy-Flip, mean and +-std over the folds, per run and target).
Needs matplotlib (python3-matplotlib); the CSVs' columns are documented in
src/io/report_format.h and src/io/report_verification.h.
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on cluster nodes
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

FIGURES = (
    ("speed.png", "samples_per_s", "seed_samples_per_s", "samples/s (all GPUs)",
     "Training speed"),
    ("memory.png", "mem_device_gb", "seed_mem_gb", "GB per GPU (1 GB = 1e9 bytes)",
     "GPU memory"),
)


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "identities" not in rows[0]:
        sys.exit(f"plot_report: {path} is not a CSV written by `pfc report --csv`")
    return rows


def points(rows, column, ours_key, seed_key):
    """One column's (identities, value) pairs, ours and the seed's, and where ours did not fit."""
    ours, seed, oom = [], [], []
    for row in rows:
        if row["column"] != column:
            continue
        n = int(row["identities"])
        if row[ours_key]:
            ours.append((n, float(row[ours_key])))
        if row[seed_key]:
            seed.append((n, float(row[seed_key])))
        if row["status"] == "out_of_memory":
            oom.append(n)
    return sorted(ours), sorted(seed), sorted(oom)


def plot(rows, out_dir):
    columns = list(dict.fromkeys(row["column"] for row in rows))
    written = []
    for name, ours_key, seed_key, ylabel, title in FIGURES:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for i, column in enumerate(columns):
            colour = f"C{i}"
            ours, seed, oom = points(rows, column, ours_key, seed_key)
            if ours:
                ax.plot(*zip(*ours), "o-", color=colour, label=f"{column} (ours)")
            if seed:
                ax.plot(*zip(*seed), "s--", color=colour, alpha=0.6, label=f"{column} (seed)")
            for n in oom:  # did not fit: marked on the axis
                ax.axvline(n, color=colour, linestyle=":", alpha=0.5)
        ax.set_xscale("log")
        ax.set_xlabel("identities")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}: ours (solid) vs seed 8 x V100-32GB (dashed)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="?", help="CSV written by `pfc report --csv FILE`")
    parser.add_argument("--verification",
                        help="CSV written by `pfc report --verification-csv FILE`")
    parser.add_argument("--out", help="folder for the PNGs (default: the CSV's folder)")
    args = parser.parse_args()
    if not args.csv and not args.verification:
        parser.error("give the report CSV, --verification CSV, or both")
    out_dir = args.out or os.path.dirname(os.path.abspath(args.csv or args.verification))
    os.makedirs(out_dir, exist_ok=True)
    if args.csv:
        for path in plot(read_rows(args.csv), out_dir):
            print(path)
    if args.verification:
        print(plot_verification(read_verification(args.verification), out_dir))


if __name__ == "__main__":
    main()
