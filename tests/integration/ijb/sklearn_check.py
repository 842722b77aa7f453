"""sklearn itself against eval_ijbc_reference.py's transcription of roc_curve and auc.

Usage: sklearn_check.py ARRAYS.npz   (written by eval_ijbc_reference.py)
"""
import sys

import numpy as np
from sklearn.metrics import auc, roc_curve

a = np.load(sys.argv[1])
fpr, tpr, thresholds = roc_curve(a["labels"], a["scores"])
ok = (np.array_equal(fpr, a["fpr"]) and np.array_equal(tpr, a["tpr"])
      and np.array_equal(thresholds[1:], a["thresholds"][1:]) and np.isinf(thresholds[0])
      and abs(auc(fpr, tpr) - float(a["auc"])) <= 1e-12)
print(f"sklearn roc_curve: {len(fpr)} points, auc {auc(fpr, tpr):.12f}; the transcription's "
      f"{len(a['fpr'])} points, auc {float(a['auc']):.12f}: {'same' if ok else 'DIFFERENT'}")
sys.exit(0 if ok else 1)
