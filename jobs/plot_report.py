#!/usr/bin/env python3
"""Plots the benchmark tables: speed and memory per GPU against identities, one line per
method (DP, MP, PFC 0.1, ...), ours solid and the seed's (8 x V100-32GB) dashed.

Usage:
    build/bin/pfc report output/bench --csv output/bench/report.csv
    python3 jobs/plot_report.py output/bench/report.csv --out output/bench/plots
writes speed.png and memory.png under --out (default: the CSV's folder).
Needs matplotlib (python3-matplotlib); the CSV's columns are documented in
src/io/report_format.h.
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="CSV written by `pfc report --csv FILE`")
    parser.add_argument("--out", help="folder for speed.png and memory.png")
    args = parser.parse_args()
    rows = read_rows(args.csv)
    out_dir = args.out or os.path.dirname(os.path.abspath(args.csv))
    os.makedirs(out_dir, exist_ok=True)
    for path in plot(rows, out_dir):
        print(path)


if __name__ == "__main__":
    main()
