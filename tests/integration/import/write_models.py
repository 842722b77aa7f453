"""Writes, with PyTorch itself, the files the import test reads (import_torch.sh).

write_models.py IMAGES.f32 OUT_DIR

IMAGES.f32 holds the test images as pfc decodes them (pfc_bin_images: float32 [n, 3, 112, 112]
NCHW, normalised). For each network (a tiny iresnet, layers [2, 2, 2, 1], MobileFaceNet and a
small Vision Transformer: embed 32, depth 2, 4 heads), with weights randomised as a trained
network has them (arcface_nets.randomise):
- NAME.pt: torch.save(net.state_dict()), as arcface_torch saves model.pt;
- NAME.onnx: torch.onnx.export as insightface's torch2onnx.py calls it (inference mode, opset
  11, input "data", initializers not graph inputs): its batch norms are folded into the
  convolutions; the ViT's with a dynamic batch dimension (its reshapes then compute their
  shapes from the input's);
- NAME.exact.f64: the embeddings of the images in float64 (the exact answer), NAME.torch.f32:
  torch's own float32 ones (how far torch itself is from exact).
Variants of the iresnet: iresnet_half.pt (every float tensor saved as float16: HalfStorage),
iresnet_views.pt (tensors saved as non-contiguous views with offsets into larger storages),
and files pfc must refuse: iresnet_wide.pt (another width), iresnet_double.pt
(DoubleStorage), iresnet_legacy.pt (PyTorch's format before 1.6), iresnet_foreign.pt (data.pkl
names os.system), iresnet_short.pt (a storage entry cut short), iresnet_cut.pt (the archive
cut in half), not_torch.zip (a zip archive of something else).
"""
import copy
import io
import sys
import zipfile

import numpy as np
import torch

import arcface_nets

EMBEDDING = 64


def export_onnx(net, path, dynamic_batch=False):
    """torch2onnx.py's call. torch's TorchScript exporter imports the onnx package only to add
    custom onnxscript functions, which these networks have none of; the test's environment has
    no onnx package (torch, onnxruntime and numpy only), so that step is skipped."""
    try:
        from torch.onnx._internal.torchscript_exporter import onnx_proto_utils
    except ImportError:
        from torch.onnx._internal import onnx_proto_utils
    try:
        import onnx  # noqa: F401
    except ImportError:
        onnx_proto_utils._add_onnxscript_fn = lambda model_bytes, custom_opsets: model_bytes
    image = torch.zeros(1, 3, 112, 112)
    kwargs = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
    if dynamic_batch:
        kwargs.update(output_names=["fc1"],
                      dynamic_axes={"data": {0: "batch"}, "fc1": {0: "batch"}})
    torch.onnx.export(net, image, path, input_names=["data"], keep_initializers_as_inputs=False,
                      verbose=False, opset_version=11, do_constant_folding=True, **kwargs)


def embeddings(net, images, out, name):
    with torch.no_grad():
        net(images).numpy().astype(np.float32).tofile(f"{out}/{name}.torch.f32")
        exact = copy.deepcopy(net).double()
        exact(images.double()).numpy().tofile(f"{out}/{name}.exact.f64")


def rewrite_zip(source, target, change):
    """A copy of a torch.save archive with change(name, bytes) -> bytes applied to each entry."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, change(info.filename, src.read(info.filename)))


def views_of(state):
    """The same values as views: 2-d and 4-d tensors transposed twice (non-contiguous strides),
    vectors as slices at an offset into a larger storage, one every other element."""
    viewed = {}
    for key, value in state.items():
        if not value.is_floating_point():
            viewed[key] = value
        elif value.dim() >= 2:
            viewed[key] = value.transpose(0, 1).contiguous().transpose(0, 1)
        else:
            wide = torch.zeros(3 + 2 * value.numel())
            wide[3::2] = value
            viewed[key] = wide[3::2]
            assert viewed[key].storage_offset() == 3 and viewed[key].stride() == (2,)
    assert any(not v.is_contiguous() for v in viewed.values())
    return viewed


def main(images_path, out):
    torch.set_num_threads(1)  # the test machine's cores are shared by the tests running
    torch.manual_seed(0)
    images = torch.from_numpy(np.fromfile(images_path, np.float32).reshape(-1, 3, 112, 112))
    nets = {
        "iresnet": arcface_nets.IResNet([2, 2, 2, 1], [16, 32, 64, 128], EMBEDDING),
        "mbf": arcface_nets.MobileFaceNet(EMBEDDING),
        "vit": arcface_nets.VisionTransformer(32, 2, 4, EMBEDDING),
    }
    for seed, (name, net) in enumerate(nets.items()):
        arcface_nets.randomise(net, 10 + seed)
        torch.save(net.state_dict(), f"{out}/{name}.pt")
        export_onnx(net, f"{out}/{name}.onnx", dynamic_batch=name == "vit")
        embeddings(net, images, out, name)

    iresnet = nets["iresnet"]
    state = iresnet.state_dict()
    half = {k: v.half() if v.is_floating_point() else v for k, v in state.items()}
    torch.save(half, f"{out}/iresnet_half.pt")
    rounded = copy.deepcopy(iresnet)
    rounded.load_state_dict({k: v.float() if v.is_floating_point() else v
                             for k, v in half.items()})
    embeddings(rounded, images, out, "iresnet_half")
    torch.save(views_of(state), f"{out}/iresnet_views.pt")

    wide = arcface_nets.IResNet([2, 2, 2, 1], [32, 32, 64, 128], EMBEDDING)
    torch.save(wide.state_dict(), f"{out}/iresnet_wide.pt")
    torch.save({k: v.double() if v.is_floating_point() else v for k, v in state.items()},
               f"{out}/iresnet_double.pt")
    torch.save(state, f"{out}/iresnet_legacy.pt", _use_new_zipfile_serialization=False)
    rewrite_zip(f"{out}/iresnet.pt", f"{out}/iresnet_foreign.pt",
                lambda name, data: data.replace(b"torch._utils\n_rebuild_tensor_v2\n",
                                                b"os\nsystem\n", 1)
                if name.endswith("data.pkl") else data)
    rewrite_zip(f"{out}/iresnet.pt", f"{out}/iresnet_short.pt",
                lambda name, data: data[:len(data) // 2] if name.endswith("/data/0") else data)
    whole = open(f"{out}/iresnet.pt", "rb").read()
    open(f"{out}/iresnet_cut.pt", "wb").write(whole[:len(whole) // 2])
    with zipfile.ZipFile(f"{out}/not_torch.zip", "w") as z:
        z.writestr("model/notes.txt", "not a model")
    print(f"torch {torch.__version__}: wrote {', '.join(nets)} (.pt, .onnx) and their "
          f"embeddings of {len(images)} images, and the variants")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
