"""eval_ijbc.py's steps 3 to 5 (arcface_torch, recognition/arcface_torch/eval_ijbc.py),
transcribed in numpy, run on the image features and faceness scores `pfc ijb` wrote, and held
against everything pfc ijb computed from them.

Usage: eval_ijbc_reference.py RESULT.h5 ROOT TARGET ARRAYS.npz

Each step as the script takes it: the meta files read whole, faceness scores as float32, the
features times their scores in float32, np.unique's template order, the mean of each media's
images and the sum over medias in float32 into a float64 template matrix, sklearn's
normalize, scores in blocks of 100000 pairs, sklearn's roc_curve (transcribed below:
_binary_clf_curve, drop_intermediate, the leading point with threshold +inf) and auc, the
flipped curve and `min(zip(abs(fpr - x), range(len(fpr))))` for each target FAR, printed
'%.2f' % (tpr * 100). Prints the table; exit 1 when pfc's differs anywhere. Writes the labels,
pfc's scores and this curve to ARRAYS.npz, so that sklearn itself can be held against the
transcription where it is installed (ijb.sh).
"""
import sys

import h5py
import numpy as np

X_LABELS = [10 ** -6, 10 ** -5, 10 ** -4, 10 ** -3, 10 ** -2, 10 ** -1]


def read_template_media_list(path):
    meta = np.loadtxt(path, dtype=str, ndmin=2)
    return meta[:, 1].astype(int), meta[:, 2].astype(int)


def read_template_pair_list(path):
    pairs = np.loadtxt(path, dtype=str, ndmin=2)
    return pairs[:, 0].astype(int), pairs[:, 1].astype(int), pairs[:, 2].astype(int)


def normalize(x):
    """sklearn.preprocessing.normalize (l2, rows): a zero row stays zero."""
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    norms[norms == 0.0] = 1.0
    return x / norms[:, np.newaxis]


def image2template_feature(img_feats, templates, medias):
    unique_templates = np.unique(templates)
    template_feats = np.zeros((len(unique_templates), img_feats.shape[1]))
    for count_template, uqt in enumerate(unique_templates):
        (ind_t,) = np.where(templates == uqt)
        face_norm_feats = img_feats[ind_t]
        face_medias = medias[ind_t]
        unique_medias, unique_media_counts = np.unique(face_medias, return_counts=True)
        media_norm_feats = []
        for u, ct in zip(unique_medias, unique_media_counts):
            (ind_m,) = np.where(face_medias == u)
            if ct == 1:
                media_norm_feats += [face_norm_feats[ind_m]]
            else:
                media_norm_feats += [np.mean(face_norm_feats[ind_m], axis=0, keepdims=True)]
        media_norm_feats = np.array(media_norm_feats)
        template_feats[count_template] = np.sum(media_norm_feats, axis=0)
    return normalize(template_feats), unique_templates


def verification(template_norm_feats, unique_templates, p1, p2):
    template2id = np.zeros((max(unique_templates) + 1, 1), dtype=int)
    for count_template, uqt in enumerate(unique_templates):
        template2id[uqt] = count_template
    score = np.zeros((len(p1),))
    total_pairs = np.array(range(len(p1)))
    batchsize = 100000
    for s in [total_pairs[i:i + batchsize] for i in range(0, len(p1), batchsize)]:
        feat1 = template_norm_feats[template2id[p1[s]]]
        feat2 = template_norm_feats[template2id[p2[s]]]
        score[s] = np.sum(feat1 * feat2, -1).flatten()
    return score


def roc_curve(y_true, y_score):
    """sklearn.metrics.roc_curve(y_true, y_score) with its defaults (pos_label 1)."""
    y_true = y_true == 1
    desc = np.argsort(y_score, kind="mergesort")[::-1]
    y_score, y_true = y_score[desc], y_true[desc]
    distinct = np.where(np.diff(y_score))[0]
    threshold_idxs = np.r_[distinct, y_true.size - 1]
    tps = np.cumsum(y_true)[threshold_idxs]
    fps = 1 + threshold_idxs - tps
    thresholds = y_score[threshold_idxs]
    if len(fps) > 2:
        optimal = np.where(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])[0]
        fps, tps, thresholds = fps[optimal], tps[optimal], thresholds[optimal]
    tps, fps = np.r_[0, tps], np.r_[0, fps]
    thresholds = np.r_[np.inf, thresholds]
    return fps / fps[-1], tps / tps[-1], thresholds


def auc(x, y):
    """sklearn.metrics.auc for an increasing x: the trapezoidal rule."""
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


def tar_row(fpr, tpr):
    fpr, tpr = np.flipud(fpr), np.flipud(tpr)
    row = []
    for x in X_LABELS:
        _, min_index = min(list(zip(abs(fpr - x), range(len(fpr)))))
        row.append(tpr[min_index])
    return row


def main():
    result, root, target, arrays = sys.argv[1:]
    t = target.lower()
    with h5py.File(result, "r") as f:
        features = f["image_features"][:]
        ours = {name: f[name][:] for name in
                ("scores", "labels", "templates", "template_features", "roc/fpr", "roc/tpr",
                 "roc/thresholds")}
        attrs = dict(f.attrs)
    templates, medias = read_template_media_list(f"{root}/meta/{t}_face_tid_mid.txt")
    p1, p2, label = read_template_pair_list(f"{root}/meta/{t}_template_pair_label.txt")
    lines = open(f"{root}/meta/{t}_name_5pts_score.txt").readlines()
    faceness_scores = np.array([line.strip().split(" ")[-1] for line in lines]).astype(np.float32)

    assert features.dtype == np.float32 and features.shape[0] == len(templates), features.shape
    img_input_feats = features * faceness_scores[:, np.newaxis]
    template_norm_feats, unique_templates = image2template_feature(img_input_feats, templates,
                                                                   medias)
    score = verification(template_norm_feats, unique_templates, p1, p2)
    fpr, tpr, thresholds = roc_curve(label, score)
    roc_auc = auc(fpr, tpr)
    tar = tar_row(fpr, tpr)
    print(f"reference {t}-{target}: " + " ".join("%.2f" % (v * 100) for v in tar)
          + f"  AUC {roc_auc * 100:.4f} %")

    problems = []

    def check(what, ok):
        if not ok:
            problems.append(what)

    check("template ids", np.array_equal(ours["templates"], unique_templates))
    worst = np.abs(ours["template_features"] - template_norm_feats).max()
    check(f"template features differ by {worst:.2e}", worst <= 1e-12)
    worst = np.abs(ours["scores"] - score).max()
    print(f"scores: {len(score)} pairs, largest difference to pfc's {worst:.2e}")
    check(f"scores differ by {worst:.2e}", worst <= 1e-12)
    check("labels", np.array_equal(ours["labels"], label))
    check(f"ROC points: pfc {len(ours['roc/fpr'])}, reference {len(fpr)}",
          len(ours["roc/fpr"]) == len(fpr))
    if len(ours["roc/fpr"]) == len(fpr):
        check("ROC fpr", np.array_equal(ours["roc/fpr"], fpr))
        check("ROC tpr", np.array_equal(ours["roc/tpr"], tpr))
        check("ROC thresholds",
              np.allclose(ours["roc/thresholds"][1:], thresholds[1:], rtol=0, atol=1e-6)
              and np.isinf(ours["roc/thresholds"][0]))
    check(f"AUC {attrs['auc']} vs {roc_auc}", abs(attrs["auc"] - roc_auc) <= 1e-12)
    for k, x in enumerate(X_LABELS):
        name = f"tar_at_far_1e-{6 - k}"
        check(f"{name}: pfc {attrs[name]}, reference {tar[k]}", attrs[name] == tar[k])
    # The ROC of pfc's own scores, for sklearn's check of this transcription.
    own_fpr, own_tpr, own_thresholds = roc_curve(label, ours["scores"])
    np.savez(arrays, labels=label, scores=ours["scores"], fpr=own_fpr, tpr=own_tpr,
             thresholds=own_thresholds, auc=auc(own_fpr, own_tpr))
    for p in problems:
        print("MISMATCH:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
