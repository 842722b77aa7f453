#!/usr/bin/env python3
"""Whether checkpoints hold the same training state, bit for bit: every dataset of model.h5
(the backbone's parameters, optimiser moments and buffers, and through the virtual datasets
over the shards the whole classifier and its moments) and every attribute of /state except
config and world_size (a run resumed elsewhere or on other ranks differs only in those).

usage: same_checkpoint.py REFERENCE OTHER... [--world-sizes W1,W2,...]
REFERENCE and OTHER are step folders (ckpt/step_NNNNNNN); --world-sizes also checks on how
many ranks each OTHER was written. Exit 0 and a one-line summary when all agree.
"""
import argparse
import sys

import h5py
import numpy as np


def contents(folder):
    with h5py.File(folder + "/model.h5", "r") as f:
        tensors = {}
        f.visititems(lambda name, obj: tensors.__setitem__(name, obj[()])
                     if isinstance(obj, h5py.Dataset) else None)
        attrs = f["state"].attrs
        state = {k: v for k, v in attrs.items() if k not in ("config", "world_size")}
        # Checkpoints from before AdamW name no moments: SGD's momentum.
        moments = f["pfc"].attrs.get("moments", "momentum")
        moments = moments.decode() if isinstance(moments, bytes) else moments
        tensors["pfc moments"] = np.array(moments.split())
        return tensors, state, int(attrs["world_size"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference")
    parser.add_argument("others", nargs="+")
    parser.add_argument("--world-sizes", help="comma-separated, one per OTHER")
    args = parser.parse_args()
    worlds = [int(w) for w in args.world_sizes.split(",")] if args.world_sizes else None
    if worlds is not None and len(worlds) != len(args.others):
        sys.exit("same_checkpoint: --world-sizes needs one number per OTHER")

    reference, state, _ = contents(args.reference)
    classifier = ["pfc/weight"] + ["pfc/" + m for m in reference["pfc moments"]]
    if any(name not in reference for name in classifier):
        sys.exit(f"{args.reference}: no classifier ({', '.join(classifier)}) in model.h5")
    problems = []
    for i, folder in enumerate(args.others):
        tensors, other_state, world = contents(folder)
        if worlds is not None and world != worlds[i]:
            problems.append(f"{folder}: written on {world} ranks, expected {worlds[i]}")
        if tensors.keys() != reference.keys():
            problems.append(f"{folder}: datasets differ: "
                            f"{sorted(tensors.keys() ^ reference.keys())}")
        problems += [f"{folder}: {name} differs" for name, value in reference.items()
                     if name in tensors and not np.array_equal(value, tensors[name])]
        if other_state.keys() != state.keys():
            problems.append(f"{folder}: state attributes differ: "
                            f"{sorted(other_state.keys() ^ state.keys())}")
        problems += [f"{folder}: state {k} is {other_state[k]}, not {state[k]}" for k in state
                     if k in other_state and not np.array_equal(state[k], other_state[k])]
    if problems:
        sys.exit("\n".join(problems))
    print(f"{len(args.others) + 1} checkpoints: {len(reference)} tensors and {len(state)} state "
          f"attributes identical")


if __name__ == "__main__":
    main()
