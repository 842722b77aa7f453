#!/usr/bin/env python3
"""Whether two runs trained the same: both metrics.h5 files log steps 1..LAST once each, in
order (a resume continues the file and drops the rows it recomputes), and /steps/loss of
steps FIRST..LAST agree to 1e-6 relative.

usage: same_losses.py A B FIRST LAST
Prints the largest relative difference; exit 0 when within 1e-6.
"""
import sys

import h5py


def losses(path, last):
    with h5py.File(path, "r") as f:
        steps = f["steps"]
        numbers = steps["step"][:].tolist()
        if numbers != list(range(1, last + 1)):
            sys.exit(f"{path}: logged steps {numbers}, expected 1..{last}")
        return dict(zip(numbers, steps["loss"][:].tolist()))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    a_path, b_path, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    a, b = losses(a_path, last), losses(b_path, last)
    worst = max(abs(a[s] - b[s]) / abs(a[s]) for s in range(first, last + 1))
    print(f"steps {first}..{last}: largest relative loss difference {worst:.3g}")
    sys.exit(0 if worst <= 1e-6 else 1)


if __name__ == "__main__":
    main()
