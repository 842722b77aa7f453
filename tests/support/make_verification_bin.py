#!/usr/bin/env python3
"""Writes an insightface verification file, a pickle of (bins, issame_list), with Python 3's
own pickle module and nothing else.

Usage:
    make_verification_bin.py PAIRS OUT.bin --protocol py2|highest

PAIRS is a text file with one pair per line, "IMAGE_A IMAGE_B SAME" (SAME 1 or 0); the images'
bytes go into the file as they are (JPEGs).

--protocol highest: pickle.HIGHEST_PROTOCOL, as Python 3 writes such files (frames,
SHORT_BINBYTES/BINBYTES, MEMOIZE).
--protocol py2: protocol 2 with the images as Python 2 stored its str objects
(SHORT_BINSTRING/BINSTRING and BINPUT), as the .bin files insightface publishes were written.
Python 3's pickle would write bytes at protocol 2 as a call to _codecs.encode; this keeps
Python 3's own pickler and only restores Python 2's rule for byte strings.
"""
import argparse
import pickle
import struct
import sys


class Python2Pickler(pickle._Pickler):
    """Python 3's pure-Python pickler with Python 2's save_string for byte strings."""

    dispatch = pickle._Pickler.dispatch.copy()

    def save_bytes_as_py2_str(self, obj):
        n = len(obj)
        if n < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([n]) + obj)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", n) + obj)
        self.memoize(obj)

    dispatch[bytes] = save_bytes_as_py2_str


def read_pairs(path):
    bins, issame = [], []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 3 or fields[2] not in ("0", "1"):
                sys.exit(f"{path}:{number}: expected 'IMAGE_A IMAGE_B 0|1', got {line!r}")
            for image in fields[:2]:
                with open(image, "rb") as g:
                    bins.append(g.read())
            issame.append(fields[2] == "1")
    return bins, issame


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs")
    parser.add_argument("out")
    parser.add_argument("--protocol", choices=("py2", "highest"), required=True)
    args = parser.parse_args()
    data = read_pairs(args.pairs)
    with open(args.out, "wb") as f:
        if args.protocol == "highest":
            pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
        else:
            Python2Pickler(f, protocol=2).dump(data)
    # Read back as arcface_torch's load_bin does, so a file this writes is one it reads.
    with open(args.out, "rb") as f:
        bins, issame = pickle.load(f, encoding="bytes")
    assert list(bins) == data[0] and list(issame) == data[1]


if __name__ == "__main__":
    main()
