"""arcface_torch's verification protocol (eval/verification.py) in numpy, for the learning test.

verification_accuracy.py EMB.f32 EMB_FLIP.f32 ISSAME DIM: prints "accuracy_flip std noflip"
for raw float32 embeddings [2N, DIM] of the images and of their mirror images (pair p = rows
2p and 2p + 1) and ISSAME, a string of N digits 0/1. As verification.py computes it: embedding
+ flipped embedding, L2-normalised; squared L2 distance per pair; 10 consecutive folds
(sklearn KFold(n_splits=10, shuffle=False): the first N % 10 folds one pair longer); in each
fold the threshold of np.arange(0, 4, 0.01) with the best accuracy on the other nine folds
(the first such, as np.argmax takes it), applied to this fold; mean and std of the folds'
accuracies. "noflip" is the same on the embeddings alone.
"""
import sys

import numpy as np


def pair_distances(embeddings):
    """Squared L2 distance of each pair's L2-normalised embeddings."""
    e = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    return np.sum(np.square(e[0::2] - e[1::2]), 1)


def fold_thresholds(dist, issame):
    """The test folds and the threshold each is judged at."""
    thresholds = np.arange(0, 4, 0.01)
    n = len(dist)
    folds = []
    for test in np.array_split(np.arange(n), 10):
        train = np.setdiff1d(np.arange(n), test)
        train_acc = [np.mean(np.less(dist[train], t) == issame[train]) for t in thresholds]
        folds.append((test, thresholds[int(np.argmax(train_acc))]))
    return folds


def fold_accuracy(embeddings, issame):
    dist = pair_distances(embeddings)
    accuracies = [np.mean(np.less(dist[test], best) == issame[test])
                  for test, best in fold_thresholds(dist, issame)]
    return float(np.mean(accuracies)), float(np.std(accuracies))


def main(emb_path, flip_path, issame_text, dim):
    dim = int(dim)
    emb = np.fromfile(emb_path, np.float32).reshape(-1, dim).astype(np.float64)
    flip = np.fromfile(flip_path, np.float32).reshape(-1, dim).astype(np.float64)
    issame = np.array([c == "1" for c in issame_text.strip()])
    if len(emb) != 2 * len(issame) or flip.shape != emb.shape:
        sys.exit(f"verification_accuracy: {len(emb)} and {len(flip)} embeddings for "
                 f"{len(issame)} pairs")
    accuracy, std = fold_accuracy(emb + flip, issame)
    noflip, _ = fold_accuracy(emb, issame)
    print(f"{accuracy:.5f} {std:.5f} {noflip:.5f}")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
