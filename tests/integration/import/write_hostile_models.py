"""Writes the model files a hostile or careless source could hand to `pfc import`
(import_hostile.sh), without PyTorch: a state_dict pickled as torch.save pickles it (protocol
2, the same GLOBALs, persistent ids and OrderedDicts, by stand-ins that carry torch's names),
in a zip archive laid out as torch.save lays it out.

write_hostile_models.py MODEL.h5 MODEL.onnx OUT_DIR

MODEL.h5 is a pfc checkpoint (its backbone's tensors, PyTorch layout, are the network's);
MODEL.onnx pfc export's model of the same network. Writes into OUT_DIR:
- genuine.pt: the backbone as torch.save writes it (pfc import reads it);
- nan.pt, inf.pt: the same with one NaN / one infinity in the first parameter;
- zeros_1g.pt: the first parameter a view of a 1 GiB storage of zeros, deflated (a few MB);
- claims_1_5g.pt: a 500-byte archive whose one storage entry claims 1.5 GiB;
- views_400.pt: the backbone plus 400 views of one 4 MB storage;
- tuples_20m.pt: a data.pkl of 20 million EMPTY_TUPLE opcodes, deflated (about 20 KB);
- cycle.onnx: MODEL.onnx and two Identity nodes that feed each other and one that feeds
  itself (a second GraphProto appended: protobuf merges its nodes into the graph);
- chain.onnx: MODEL.onnx and a chain of 30000 Identity nodes off its first value.
"""
import collections
import io
import struct
import sys
import types
import zipfile
import pickle

import h5py
import numpy as np

# Stand-ins with torch's names, so that pickle writes the GLOBALs torch.save writes.
torch = types.ModuleType("torch")
torch_utils = types.ModuleType("torch._utils")
torch._utils = torch_utils
sys.modules["torch"] = torch
sys.modules["torch._utils"] = torch_utils


class FloatStorage:
    pass


FloatStorage.__module__ = "torch"
torch.FloatStorage = FloatStorage


def _rebuild_tensor_v2(*args):
    raise AssertionError("never called: only pickled")


_rebuild_tensor_v2.__module__ = "torch._utils"
torch_utils._rebuild_tensor_v2 = _rebuild_tensor_v2


class Storage:
    def __init__(self, key, numel):
        self.key, self.numel = key, numel


class View:
    """A tensor: (offset, size, stride) of a storage."""

    def __init__(self, storage, size, offset=0, stride=None):
        self.storage, self.size, self.offset = storage, tuple(size), offset
        if stride is None:
            stride, step = [], 1
            for d in reversed(self.size):
                stride.insert(0, step)
                step *= d
        self.stride = tuple(stride)

    def __reduce__(self):
        return (_rebuild_tensor_v2, (self.storage, self.offset, self.size, self.stride, False,
                                     collections.OrderedDict()))


class StateDictPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", FloatStorage, obj.key, "cpu", obj.numel)
        return None


def pickle_state_dict(views):
    out = io.BytesIO()
    StateDictPickler(out, protocol=2).dump(collections.OrderedDict(views))
    return out.getvalue()


def write_archive(path, pickle_bytes, storages, deflated=()):
    """storages: {key: bytes or a callable writing into a file}; deflated: keys to deflate."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pickle_bytes,
                   zipfile.ZIP_DEFLATED if "data.pkl" in deflated else zipfile.ZIP_STORED)
        z.writestr("archive/byteorder", b"little")
        for key, data in storages.items():
            info = zipfile.ZipInfo(f"archive/data/{key}")
            info.compress_type = zipfile.ZIP_DEFLATED if key in deflated else zipfile.ZIP_STORED
            if callable(data):
                with z.open(info, "w", force_zip64=True) as f:
                    data(f)
            else:
                z.writestr(info, data)


def backbone(model_h5):
    tensors = collections.OrderedDict()
    with h5py.File(model_h5, "r") as f:
        for group in ("backbone/parameters", "backbone/buffers"):
            for name in f[group]:
                tensors[name] = np.asarray(f[group][name][:], dtype="<f4")
    return tensors


def genuine(tensors, change=None):
    views, storages = collections.OrderedDict(), {}
    for i, (name, value) in enumerate(tensors.items()):
        value = value.copy()
        if change and i == 0:
            change(value)
        views[name] = View(Storage(str(i), value.size), value.shape)
        storages[str(i)] = value.tobytes()
    return views, storages


def write_zeros_1g(tensors, path):
    views, storages = genuine(tensors)
    first = next(iter(views))
    numel = (1 << 30) // 4
    views[first] = View(Storage("0", numel), tensors[first].shape)

    def zeros(f):
        block = bytes(1 << 24)
        for _ in range((1 << 30) // len(block)):
            f.write(block)

    storages["0"] = zeros
    write_archive(path, pickle_state_dict(views), storages, deflated={"0"})


def write_claims(tensors, path):
    """One tensor whose storage entry holds 16 deflated bytes and claims 1.5 GiB in both the
    local header and the central directory (so the archive is consistent)."""
    first = next(iter(tensors))
    claimed = 3 << 29
    views = {first: View(Storage("0", claimed // 4), tensors[first].shape)}
    write_archive(path, pickle_state_dict(views), {"0": bytes(16)}, deflated={"0"})
    data = bytearray(open(path, "rb").read())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("archive/data/0")
    # Local header: the uncompressed size at byte 22; the central record's at byte 24.
    struct.pack_into("<I", data, info.header_offset + 22, claimed)
    name = b"archive/data/0"
    central = data.find(b"PK\x01\x02")
    while central >= 0 and data[central + 46:central + 46 + len(name)] != name:
        central = data.find(b"PK\x01\x02", central + 4)
    assert central >= 0
    struct.pack_into("<I", data, central + 24, claimed)
    open(path, "wb").write(bytes(data))


def write_views(tensors, path):
    views, storages = genuine(tensors)
    numel = 1 << 20
    shared = Storage("shared", numel)
    for i in range(400):
        views[f"extra.{i}"] = View(shared, (numel,))
    storages["shared"] = np.arange(numel, dtype="<f4").tobytes()
    write_archive(path, pickle_state_dict(views), storages)


def write_tuples(path):
    write_archive(path, b"\x80\x02" + b")" * 20_000_000 + b".", {}, deflated={"data.pkl"})


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def identity(name, source, target):
    # NodeProto: input 1, output 2, name 3, op_type 4.
    return field(1, source.encode()) + field(2, target.encode()) + field(3, name.encode()) + \
        field(4, b"Identity")


def with_nodes(onnx_bytes, nodes):
    """ModelProto field 7 is the graph; a second one merges into it (GraphProto node: 1)."""
    return onnx_bytes + field(7, b"".join(field(1, n) for n in nodes))


def main(model_h5, model_onnx, out):
    tensors = backbone(model_h5)
    views, storages = genuine(tensors)
    write_archive(f"{out}/genuine.pt", pickle_state_dict(views), storages)
    for name, value in (("nan", np.nan), ("inf", np.inf)):
        views, storages = genuine(tensors, lambda v, x=value: v.reshape(-1).__setitem__(3, x))
        write_archive(f"{out}/{name}.pt", pickle_state_dict(views), storages)
    write_zeros_1g(tensors, f"{out}/zeros_1g.pt")
    write_claims(tensors, f"{out}/claims_1_5g.pt")
    write_views(tensors, f"{out}/views_400.pt")
    write_tuples(f"{out}/tuples_20m.pt")
    onnx_bytes = open(model_onnx, "rb").read()
    open(f"{out}/cycle.onnx", "wb").write(with_nodes(onnx_bytes, [
        identity("loop_a", "loop_x", "loop_y"), identity("loop_b", "loop_y", "loop_x"),
        identity("self_loop", "self_v", "self_v")]))
    first_value = "data"  # pfc export's input
    chain = [identity(f"chain_{i}", first_value if i == 0 else f"chain_{i - 1}", f"chain_{i}")
             for i in range(30000)]
    open(f"{out}/chain.onnx", "wb").write(with_nodes(onnx_bytes, chain))


if __name__ == "__main__":
    main(*sys.argv[1:])
