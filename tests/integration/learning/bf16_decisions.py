"""What bf16 inference changes in the learning test's verification, for the learning test.

bf16_decisions.py F32.h5 BF16.h5: two `pfc embed --flip` outputs of the same pairs. Prints the
lowest cosine between an image's bf16 and f32 embeddings (its mirror image's too), and how
many pairs bf16 decides otherwise than f32 at f32's own thresholds (verification.py's folds;
each fold judged at the threshold f32 chose on the other nine). The protocol's accuracy moves
by whole pairs whenever a fold's best threshold moves one step of its 0.01 grid, so a small
change of the distances can move it by several pairs; the decisions at fixed thresholds are
what bf16 itself changes. Prints "COSINE_MIN CHANGED PAIRS".
"""
import sys

import h5py
import numpy as np

from verification_accuracy import fold_thresholds, pair_distances


def read(path):
    with h5py.File(path, "r") as f:
        return (f["embeddings"][:].astype(np.float64), f["embeddings_flip"][:].astype(np.float64),
                f["issame"][:].astype(bool))


def cosines(a, b):
    return np.sum(a * b, 1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def main(f32_path, bf16_path):
    emb32, flip32, issame = read(f32_path)
    emb16, flip16, issame16 = read(bf16_path)
    if emb16.shape != emb32.shape or not np.array_equal(issame, issame16):
        sys.exit(f"bf16_decisions: {f32_path} and {bf16_path} hold different pairs")
    cosine_min = min(cosines(emb32, emb16).min(), cosines(flip32, flip16).min())
    dist32, dist16 = pair_distances(emb32 + flip32), pair_distances(emb16 + flip16)
    changed = sum(int(np.sum(np.less(dist32[test], t) != np.less(dist16[test], t)))
                  for test, t in fold_thresholds(dist32, issame))
    print(f"{cosine_min:.6f} {changed} {len(issame)}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
