"""Writes an insightface verification file (lfw.bin's format) of synthetic face photos.

write_verification_bin.py PHOTO_DIR PAIRS SEED OUT_PY2.bin OUT_PY3.bin

PHOTO_DIR holds one folder per identity (id_NNNNN/img_NN.jpg). The file is the pickle of
(bins, issame_list) that arcface_torch's eval/verification.py `load_bin` reads: 2 * PAIRS
JPEGs as bytes, pair p being images 2p and 2p + 1, and PAIRS booleans. As in LFW's files,
each tenth of the pairs (one fold of the 10-fold protocol) is half same-identity pairs (two
different photos of one person) and half pairs of two people.

Written twice with python3's own pickle module, as files in the wild come:
- OUT_PY2: as Python 2 wrote them (protocol 2, every image a `str`: SHORT_BINSTRING or
  BINSTRING, memoised with BINPUT/LONG_BINPUT). Python 3 would pickle bytes at protocol 2
  as a call of _codecs.encode (GLOBAL + REDUCE), which no reader of such files should run, so
  the pickler is told to write bytes as Python 2's str.
- OUT_PY3: pickle.HIGHEST_PROTOCOL (frames, SHORT_BINBYTES/BINBYTES, MEMOIZE).
"""
import os
import pickle
import random
import struct
import sys


class Python2Pickler(pickle._Pickler):
    """Protocol 2 as Python 2's pickle wrote a str: the bytes inline, then memoised."""

    dispatch = pickle._Pickler.dispatch.copy()

    def save_python2_str(self, obj):
        n = len(obj)
        if n < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([n]) + obj)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", n) + obj)
        self.memoize(obj)

    dispatch[bytes] = save_python2_str


def pairs_of(photo_dir, pairs, seed):
    people = sorted(d for d in os.listdir(photo_dir) if d.startswith("id_"))
    photos = {}
    for person in people:
        folder = os.path.join(photo_dir, person)
        photos[person] = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    rng = random.Random(seed)
    paths, issame = [], []
    for fold in range(10):
        size = pairs // 10 + (fold < pairs % 10)
        for k in range(size):
            same = k < size // 2
            if same:
                person = rng.choice(people)
                paths += rng.sample(photos[person], 2)
            else:
                a, b = rng.sample(people, 2)
                paths += [rng.choice(photos[a]), rng.choice(photos[b])]
            issame.append(same)
    return paths, issame


def main(photo_dir, pairs, seed, out_py2, out_py3):
    paths, issame = pairs_of(photo_dir, int(pairs), int(seed))
    bins = []
    for path in paths:
        with open(path, "rb") as f:
            bins.append(f.read())
    with open(out_py2, "wb") as f:
        Python2Pickler(f, protocol=2).dump((bins, issame))
    with open(out_py3, "wb") as f:
        pickle.dump((bins, issame), f, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"{len(issame)} pairs ({sum(issame)} same-identity) of {len(bins)} images "
          f"from {photo_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    main(*sys.argv[1:])
