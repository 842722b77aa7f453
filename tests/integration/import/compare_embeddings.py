"""compare_embeddings.py EMB REFERENCE EMBEDDING: pfc embed's embeddings (EMB.h5's /embeddings,
or a raw float32 file EMB.f32 [n, EMBEDDING]: onnxruntime's) against PyTorch's for the same images (REFERENCE.exact.f64, the float64 answer,
and REFERENCE.torch.f32, torch's own float32). The rule is the fp32 golden rule: each
embedding within a relative L2 error of max(1e-4, 4 x torch's worst float32 error) of exact.
"""
import sys

import h5py
import numpy as np


def main(emb_path, reference, width):
    width = int(width)
    if emb_path.endswith(".f32"):
        ours = np.fromfile(emb_path, np.float32).reshape(-1, width).astype(np.float64)
    else:
        with h5py.File(emb_path, "r") as f:
            ours = f["embeddings"][:].astype(np.float64)
    exact = np.fromfile(f"{reference}.exact.f64", np.float64).reshape(-1, width)
    torch32 = np.fromfile(f"{reference}.torch.f32", np.float32).reshape(-1, width)
    if ours.shape != exact.shape:
        sys.exit(f"{emb_path}: embeddings {ours.shape}, torch's {exact.shape}")
    norm = np.linalg.norm(exact, axis=1)
    error = np.linalg.norm(ours - exact, axis=1) / norm
    torch_error = np.linalg.norm(torch32 - exact, axis=1) / norm
    bound = max(1e-4, 4 * torch_error.max())
    ok = error.max() <= bound
    print(f"{emb_path}: relative L2 to exact: worst {error.max():.2e}, median "
          f"{np.median(error):.2e}; torch fp32 worst {torch_error.max():.2e}; bound "
          f"{bound:.2e}: {'ok' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
