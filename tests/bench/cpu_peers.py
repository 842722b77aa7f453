"""The peers of tests/bench/cpu_vs_peers.sh, timed on the same cores as pfc.

  cpu_peers.py train NETWORK BATCH CLASSES STEPS WARMUP THREADS [PRECISION]
      PyTorch trains arcface_torch's iresnet r18 or r50 (written below, as its iresnet.py defines
      it: NCHW module, run channels_last as PyTorch's CPU runs best) or vit_t (the ViT of the
      import test, tests/integration/import/arcface_nets.py, with vit.py's training forward:
      10 % of the tokens masked, DropPath at linspace(0, 0.1, depth)) with PartialFC at sample
      rate 1 and the ArcFace margin, SGD momentum 0.9, weight decay 5e-4, in fp32, or with
      PRECISION bf16 the backbone's forward under torch.autocast("cpu", torch.bfloat16), as
      arcface_torch autocasts its backbone with fp16 on (the classifier stays fp32). Under
      torchrun-style variables WORLD_SIZE/RANK/MASTER_ADDR/MASTER_PORT it runs
      DistributedDataParallel over gloo, BATCH per rank (as pfc's batch_size). Prints
      "samples/s X" (all ranks together).
  cpu_peers.py embed MODEL.onnx BATCH IMAGES COPIES THREADS
      onnxruntime runs pfc's exported model on IMAGES random images (x COPIES: 2 for an image and
      its mirror image, as verification does), BATCH at a time, the last batch partial, timed
      from the first run (as pfc times itself). Prints "images/s X" (images, not forwards).
"""
import os
import sys
import time

import numpy as np


def training_vit(torch, nn):
    """vit_t (embed 256, 12 blocks of 8 heads) with vit.py's training forward."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration", "import"))
    import arcface_nets

    class TrainingViT(arcface_nets.VisionTransformer):
        def forward(self, x):
            n, tokens, width = x.shape[0], self.num_patches, self.embed_dim
            x = self.patch_embed(x) + self.pos_embed
            kept = int(tokens * 0.9)
            order = torch.rand(n, tokens).argsort(1)
            restore = order.argsort(1)
            x = torch.gather(x, 1, order[:, :kept, None].expand(-1, -1, width))
            rates = torch.linspace(0, 0.1, len(self.blocks)).tolist()

            def drop_path(branch, rate):
                if rate == 0:
                    return branch
                keep = (torch.rand(n, 1, 1) >= rate).to(branch.dtype) / (1 - rate)
                return branch * keep

            for rate, block in zip(rates, self.blocks):
                x = x + drop_path(block.attn(block.norm1(x)), rate)
                x = x + drop_path(block.mlp(block.norm2(x)), rate)
            x = self.norm(x)
            x = torch.cat([x, self.mask_token.expand(n, tokens - kept, width)], 1)
            x = torch.gather(x, 1, restore[:, :, None].expand(-1, -1, width))
            return self.feature(x.reshape(n, tokens * width))

    return TrainingViT(256, 12, 8, 512)


def train(network, batch, classes, steps, warmup, threads, precision="fp32"):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        import torch.distributed as dist
        dist.init_process_group("gloo")

    def conv3x3(cin, cout, stride=1):
        return nn.Conv2d(cin, cout, 3, stride, 1, bias=False)

    class IBasicBlock(nn.Module):
        def __init__(self, cin, planes, stride, downsample):
            super().__init__()
            self.bn1 = nn.BatchNorm2d(cin, eps=1e-5)
            self.conv1 = conv3x3(cin, planes)
            self.bn2 = nn.BatchNorm2d(planes, eps=1e-5)
            self.prelu = nn.PReLU(planes)
            self.conv2 = conv3x3(planes, planes, stride)
            self.bn3 = nn.BatchNorm2d(planes, eps=1e-5)
            self.downsample = downsample

        def forward(self, x):
            out = self.bn3(self.conv2(self.prelu(self.bn2(self.conv1(self.bn1(x))))))
            return out + (self.downsample(x) if self.downsample is not None else x)

    class IResNet(nn.Module):
        def __init__(self, layers, emb=512):
            super().__init__()
            self.conv1 = conv3x3(3, 64)
            self.bn1 = nn.BatchNorm2d(64, eps=1e-5)
            self.prelu = nn.PReLU(64)
            cin, stages = 64, []
            for planes, blocks in zip((64, 128, 256, 512), layers):
                down = nn.Sequential(nn.Conv2d(cin, planes, 1, 2, bias=False),
                                     nn.BatchNorm2d(planes, eps=1e-5))
                stage = [IBasicBlock(cin, planes, 2, down)]
                stage += [IBasicBlock(planes, planes, 1, None) for _ in range(1, blocks)]
                stages.append(nn.Sequential(*stage))
                cin = planes
            self.layers = nn.Sequential(*stages)
            self.bn2 = nn.BatchNorm2d(512, eps=1e-5)
            self.dropout = nn.Dropout(0.0)
            self.fc = nn.Linear(512 * 7 * 7, emb)
            self.features = nn.BatchNorm1d(emb, eps=1e-5)
            nn.init.constant_(self.features.weight, 1.0)
            self.features.weight.requires_grad = False

        def forward(self, x):
            x = self.layers(self.prelu(self.bn1(self.conv1(x))))
            x = self.dropout(torch.flatten(self.bn2(x), 1))
            return self.features(self.fc(x))

    if network == "vit_t":
        model = training_vit(torch, nn)
    else:
        layers = {"r18": [2, 2, 2, 2], "r50": [3, 4, 14, 3]}[network]
        model = IResNet(layers).to(memory_format=torch.channels_last)
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    rank = int(os.environ.get("RANK", "0"))
    # PartialFC at sample rate 1: this rank's shard of the class centres.
    shard = classes // world + (rank < classes % world)
    centres = nn.Parameter(torch.normal(0, 0.01, (shard, 512)))
    opt = torch.optim.SGD([{"params": model.parameters()}, {"params": [centres]}], lr=0.1,
                          momentum=0.9, weight_decay=5e-4)
    images = torch.randn(batch, 3, 112, 112).contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, shard, (batch,))
    s, m = 64.0, 0.5

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            emb = model(images)
        emb = emb.float()
        cos = F.linear(F.normalize(emb), F.normalize(centres)).clamp(-1, 1)
        with torch.no_grad():
            target = torch.cos(torch.acos(cos[torch.arange(batch), labels]) + m)
        logits = cos.clone()
        logits[torch.arange(batch), labels] = target + (cos[torch.arange(batch), labels]
                                                        - cos[torch.arange(batch), labels].detach())
        loss = F.cross_entropy(logits * s, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()

    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    seconds = time.perf_counter() - start
    if rank == 0:
        print(f"samples/s {batch * world * steps / seconds:.3f}")


def embed(model, batch, images, copies, threads):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    data = np.random.default_rng(0).standard_normal((batch * copies, 3, 112, 112),
                                                     dtype=np.float32)
    # Timed as pfc embed times itself: from the first image to the last (the session, like
    # pfc's opened checkpoint, is made before), every image once, the last batch partial.
    start = time.perf_counter()
    for first in range(0, images, batch):
        n = min(batch, images - first) * copies
        session.run(None, {"data": data[:n]})
    seconds = time.perf_counter() - start
    print(f"images/s {images / seconds:.3f}")

if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    if what == "train":
        train(args[0], *map(int, args[1:6]), *args[6:])
    else:
        embed(args[0], *map(int, args[1:]))
