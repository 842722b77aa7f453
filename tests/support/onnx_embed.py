"""Runs an exported ONNX face model with onnxruntime, as insightface's tools do.

onnx_embed.py MODEL INPUT OUTPUT [BATCH]: INPUT holds raw float32 images [n, 3, s, s] (NCHW,
already normalised as (pixel / 255 - 0.5) / 0.5), OUTPUT gets the raw float32 embeddings
[n, emb], computed BATCH images at a time (64 unless given).
The model's own input and output description is checked against torch2onnx.py's: one input
`data` [None, 3, s, s] float32 and one output [None, emb]. Prints what it ran.
"""
import sys

import numpy as np
import onnxruntime as ort


def main(model_path, input_path, output_path, batch="64"):
    batch = int(batch)
    session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    inputs, outputs = session.get_inputs(), session.get_outputs()
    if len(inputs) != 1 or inputs[0].name != "data" or inputs[0].type != "tensor(float)":
        sys.exit(f"onnx_embed: inputs {[(i.name, i.type) for i in inputs]}, not one float 'data'")
    shape = inputs[0].shape
    if len(shape) != 4 or isinstance(shape[0], int) or shape[1] != 3 or shape[2] != shape[3]:
        sys.exit(f"onnx_embed: input shape {shape} is not [N, 3, s, s] with N dynamic")
    if len(outputs) != 1 or len(outputs[0].shape) != 2 or isinstance(outputs[0].shape[0], int):
        sys.exit(f"onnx_embed: outputs {[(o.name, o.shape) for o in outputs]}, not one [N, emb]")
    size = shape[2]
    images = np.fromfile(input_path, dtype=np.float32)
    if images.size % (3 * size * size):
        sys.exit(f"onnx_embed: {input_path} holds {images.size} floats, no whole 3x{size}x{size}")
    images = images.reshape(-1, 3, size, size)
    # Whole batches and a last, smaller one: the batch dimension must really be free.
    embeddings = [session.run(None, {"data": images[i:i + batch]})[0]
                  for i in range(0, len(images), batch)]
    result = np.concatenate(embeddings).astype(np.float32)
    result.tofile(output_path)
    print(f"onnxruntime {ort.__version__}: {len(images)} images -> {list(result.shape)} "
          f"({outputs[0].name})")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(*sys.argv[1:])
