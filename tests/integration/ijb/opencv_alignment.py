"""pfc's alignment against eval_ijbc.py's: skimage's SimilarityTransform.estimate onto arcface's
template, cv2.warpAffine with its defaults (bilinear, zero border), BGR read and RGB out.

Usage: opencv_alignment.py LIST SIZE OUT   (LIST and OUT as for pfc_align_faces)

Passes when every crop is within 1 grey level of OpenCV's on average (mean absolute
difference over its pixels and channels), and every transform within 1e-9 of skimage's on the
same (f32) landmarks given in f64. eval_ijbc.py gives skimage f32 arrays, which it then solves
in f32: that transform, which OpenCV's reference crop is warped with, is within f32's rounding
(1e-4 here) of the exact one.
"""
import sys
import warnings

import cv2
import numpy as np
from skimage import transform as trans

ARCFACE = np.array([[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366],
                    [41.5493, 92.3655], [70.7299, 92.2041]], dtype=np.float32)

list_file, size, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [line.split() for line in open(list_file) if line.strip()]
crops = np.fromfile(out + ".rgb", np.uint8).reshape(len(lines), size, size, 3)
transforms = np.loadtxt(out + ".txt", ndmin=2)
dst = ARCFACE * (size / 112.0)
mads, worst_pixel, worst_m, worst_f32, identical = [], 0, 0.0, 0.0, 0
for i, fields in enumerate(lines):
    img = cv2.imread(fields[0])
    lmk = np.array([float(x) for x in fields[1:11]], dtype=np.float32).reshape((5, 2))
    tform, exact_tform = trans.SimilarityTransform(), trans.SimilarityTransform()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skimage 0.26 prefers from_estimate; the script calls this
        tform.estimate(lmk, dst)
        exact_tform.estimate(lmk.astype(np.float64), dst.astype(np.float64))
    m = tform.params[0:2, :]
    ref = cv2.cvtColor(cv2.warpAffine(img, m, (size, size), borderValue=0.0), cv2.COLOR_BGR2RGB)
    diff = np.abs(crops[i].astype(int) - ref.astype(int))
    mads.append(diff.mean())
    worst_pixel = max(worst_pixel, int(diff.max()))
    identical += int(diff.max() == 0)
    exact_m = exact_tform.params[0:2].flatten()
    worst_m = max(worst_m, float(np.abs(transforms[i] - exact_m).max()))
    worst_f32 = max(worst_f32, float(np.abs(transforms[i] - m.flatten()).max()))
print(f"OpenCV {cv2.__version__}, scikit-image: {len(lines)} crops of {size}x{size}: mean absolute "
      f"difference {np.mean(mads):.4f} grey levels (largest {max(mads):.4f}, largest single "
      f"value {worst_pixel}, {identical} crops identical); transforms within {worst_m:.2e} of "
      f"skimage's in f64, {worst_f32:.2e} of eval_ijbc.py's f32 ones")
sys.exit(0 if max(mads) <= 1.0 and worst_m <= 1e-9 and worst_f32 <= 1e-4 else 1)
