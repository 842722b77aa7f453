"""What the integration tests read back from a run's output, with h5py.

  inspect_run.py digest DIR             one line per file under DIR but training.log: its sha256
                                        and path (to show that a refused run changed no byte;
                                        training.log is the run's log, which every attempt to
                                        continue it appends to: kept_log checks it)
  inspect_run.py status RUN             /summary status and message of RUN/metrics.h5
  inspect_run.py last-skipped RUN       /steps/skipped_records of the last row
  inspect_run.py same-losses A B FIRST LAST
                                        both metrics.h5 log steps 1..LAST once each, in order,
                                        and their losses of steps FIRST..LAST are bit-identical
  inspect_run.py same-checkpoint A B    two step folders hold bit-identical tensors (the class
                                        matrices through the virtual datasets included) and
                                        training state (world_size and config aside)
  inspect_run.py usable FOLDER          every value of a step folder is finite and below
                                        sqrt(FLT_MAX) (what pfc checks before writing one)
  inspect_run.py damage FOLDER HOW      damages a checkpoint: nan-conv1 | nan-running-var |
                                        huge-centre (h5py writes, checksums kept consistent) |
                                        flip-shard (one stored byte of shard_00001's /weight) |
                                        strip-checksums (rewrites every dataset without a
                                        checksum, as versions before checksums wrote them)
"""
import hashlib
import os
import sys

import h5py
import numpy as np


def digest(folder):
    for root, _, files in sorted(os.walk(folder)):
        for name in sorted(files):
            if name == "training.log":
                continue
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                print(hashlib.sha256(f.read()).hexdigest(), os.path.relpath(path, folder))


def status(run):
    summary = h5py.File(os.path.join(run, "metrics.h5"), "r")["summary"].attrs
    print(summary["status"], summary["message"], sep="\n")


def last_skipped(run):
    print(int(h5py.File(os.path.join(run, "metrics.h5"), "r")["steps/skipped_records"][-1]))


def same_losses(a, b, first, last):
    def losses(path):
        steps = h5py.File(os.path.join(path, "metrics.h5"), "r")["steps"]
        numbers = steps["step"][:].tolist()
        if numbers != list(range(1, last + 1)):
            sys.exit(f"{path}: logged steps {numbers}, expected 1..{last}")
        return steps["loss"][:]
    la, lb = losses(a), losses(b)
    if not np.array_equal(la[first - 1:last], lb[first - 1:last]):
        sys.exit(f"losses of steps {first}..{last} differ:\n{la}\n{lb}")


def contents(folder):
    f = h5py.File(os.path.join(folder, "model.h5"), "r")
    tensors = {}
    f.visititems(lambda name, obj: tensors.__setitem__(name, obj[()])
                 if isinstance(obj, h5py.Dataset) else None)
    state = {k: v for k, v in f["state"].attrs.items() if k not in ("config", "world_size")}
    return tensors, state


def same_checkpoint(a, b):
    (ta, sa), (tb, sb) = contents(a), contents(b)
    if ta.keys() != tb.keys():
        sys.exit(f"{a} and {b} hold different tensors")
    for name in ta:
        if not np.array_equal(ta[name], tb[name]):
            sys.exit(f"{name} differs between {a} and {b}")
    if sa.keys() != sb.keys() or any(not np.array_equal(sa[k], sb[k]) for k in sa):
        sys.exit(f"the training state differs: {sa} vs {sb}")


def usable(folder):
    tensors, _ = contents(folder)
    limit = np.sqrt(np.finfo(np.float32).max)
    for name, values in tensors.items():
        if not np.all(np.abs(values) < limit):
            sys.exit(f"{folder}: {name} holds values that are not finite or beyond {limit:g}")


def rewrite(path, name, change):
    with h5py.File(path, "r+") as f:
        values = f[name][()]
        change(values)
        f[name][...] = values


def strip_checksums(path):
    with h5py.File(path, "r+") as f:
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset)
                     and not o.is_virtual else None)
        for name in names:
            values, attrs = f[name][()], dict(f[name].attrs)
            del f[name]
            f.create_dataset(name, data=values)  # contiguous: no filter, no checksum
            f[name].attrs.update(attrs)


def damage(folder, how):
    model = os.path.join(folder, "model.h5")
    if how == "nan-conv1":
        rewrite(model, "backbone/parameters/conv1.weight", lambda v: v.flat.__setitem__(0, np.nan))
    elif how == "nan-running-var":
        rewrite(model, "backbone/buffers/bn1.running_var", lambda v: v.__setitem__(0, np.nan))
    elif how == "huge-centre":
        rewrite(os.path.join(folder, "shard_00000.h5"), "weight",
                lambda v: v.__setitem__((3, 4), 3.4e38))
    elif how == "flip-shard":
        shard = os.path.join(folder, "shard_00001.h5")
        with h5py.File(shard, "r") as f:
            offset = f["weight"].id.get_chunk_info(0).byte_offset
        with open(shard, "r+b") as f:
            f.seek(offset + 100)
            byte = f.read(1)[0]
            f.seek(offset + 100)
            f.write(bytes([byte ^ 0x40]))
    elif how == "strip-checksums":
        for name in sorted(os.listdir(folder)):
            strip_checksums(os.path.join(folder, name))
    else:
        sys.exit(f"unknown damage {how}")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "digest":
        digest(*args)
    elif command == "status":
        status(*args)
    elif command == "last-skipped":
        last_skipped(*args)
    elif command == "same-losses":
        same_losses(args[0], args[1], int(args[2]), int(args[3]))
    elif command == "same-checkpoint":
        same_checkpoint(*args)
    elif command == "usable":
        usable(*args)
    elif command == "damage":
        damage(*args)
    else:
        sys.exit(__doc__)
