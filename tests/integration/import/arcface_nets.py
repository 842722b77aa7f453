"""Small networks in PyTorch with arcface_torch's module layout, so that their state_dict names
are those of arcface_torch's iresnet, MobileFaceNet and Vision Transformer (conv1.weight,
layer2.0.bn1.running_var, layers.3.layers.0.layers.1.layers.0.weight, features.layers.3.weight,
blocks.1.attn.qkv.weight, feature.3.running_var, ...). Written for the import test from the
layer definitions in SPEC.md and the README, not copied from insightface: the test needs files
that torch itself wrote for such networks.
"""
import torch
from torch import nn


class IBasicBlock(nn.Module):
    """BN -> conv3x3 -> BN -> PReLU -> conv3x3 (stride) -> BN, plus the shortcut."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin, eps=1e-5)
        self.conv1 = nn.Conv2d(cin, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout, eps=1e-5)
        self.prelu = nn.PReLU(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, stride, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout, eps=1e-5)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout, eps=1e-5))

    def forward(self, x):
        out = self.bn3(self.conv2(self.prelu(self.bn2(self.conv1(self.bn1(x))))))
        return out + (x if self.downsample is None else self.downsample(x))


class IResNet(nn.Module):
    def __init__(self, layers, widths, embedding_size, image_size=112):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0], eps=1e-5)
        self.prelu = nn.PReLU(widths[0])
        cin = widths[0]
        for stage, (depth, width) in enumerate(zip(layers, widths)):
            blocks = []
            for b in range(depth):
                blocks.append(IBasicBlock(cin, width, 2 if b == 0 else 1))
                cin = width
            setattr(self, f"layer{stage + 1}", nn.Sequential(*blocks))
        self.bn2 = nn.BatchNorm2d(cin, eps=1e-5)
        self.dropout = nn.Dropout(p=0.0)
        side = image_size // 16
        self.fc = nn.Linear(cin * side * side, embedding_size)
        self.features = nn.BatchNorm1d(embedding_size, eps=1e-5)
        self.features.weight.requires_grad = False

    def forward(self, x):
        x = self.prelu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.bn2(x), 1)
        return self.features(self.fc(self.dropout(x)))


class ConvBlock(nn.Module):
    """conv (groups) -> BN [-> PReLU]: MobileFaceNet's ConvBlock, or its LinearBlock."""

    def __init__(self, cin, cout, kernel=1, stride=1, pad=0, groups=1, prelu=True):
        super().__init__()
        parts = [nn.Conv2d(cin, cout, kernel, stride, pad, groups=groups, bias=False),
                 nn.BatchNorm2d(cout)]
        if prelu:
            parts.append(nn.PReLU(cout))
        self.layers = nn.Sequential(*parts)

    def forward(self, x):
        return self.layers(x)


class DepthWise(nn.Module):
    """1x1 -> depthwise 3x3 (stride) -> 1x1 without activation, residual when asked."""

    def __init__(self, cin, cout, residual, stride, width):
        super().__init__()
        self.residual = residual
        self.layers = nn.Sequential(ConvBlock(cin, width),
                                    ConvBlock(width, width, 3, stride, 1, groups=width),
                                    ConvBlock(width, cout, prelu=False))

    def forward(self, x):
        y = self.layers(x)
        return x + y if self.residual else y


class Residual(nn.Module):
    def __init__(self, channels, units, width):
        super().__init__()
        self.layers = nn.Sequential(*[DepthWise(channels, channels, True, 1, width)
                                      for _ in range(units)])

    def forward(self, x):
        return self.layers(x)


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


class GDC(nn.Module):
    def __init__(self, embedding_size):
        super().__init__()
        self.layers = nn.Sequential(ConvBlock(512, 512, 7, 1, 0, groups=512, prelu=False),
                                    Flatten(), nn.Linear(512, embedding_size, bias=False),
                                    nn.BatchNorm1d(embedding_size))

    def forward(self, x):
        return self.layers(x)


class MobileFaceNet(nn.Module):
    """get_mbf: residual stages of 1, 4, 6, 2 units, channel scale 2, 112x112 images."""

    def __init__(self, embedding_size, blocks=(1, 4, 6, 2), scale=2):
        super().__init__()
        narrow, wide = 64 * scale, 128 * scale
        self.layers = nn.ModuleList([ConvBlock(3, narrow, 3, 2, 1)])
        self.layers.append(ConvBlock(narrow, narrow, 3, 1, 1, groups=64) if blocks[0] == 1
                           else Residual(narrow, blocks[0], 128))
        self.layers.extend([DepthWise(narrow, narrow, False, 2, 128),
                            Residual(narrow, blocks[1], 128),
                            DepthWise(narrow, wide, False, 2, 256),
                            Residual(wide, blocks[2], 256),
                            DepthWise(wide, wide, False, 2, 512),
                            Residual(wide, blocks[3], 256)])
        self.conv_sep = ConvBlock(wide, 512)
        self.features = GDC(embedding_size)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.features(self.conv_sep(x))


class PatchEmbed(nn.Module):
    """Non-overlapping patch x patch squares, each a token of embed_dim: [n, tokens, embed_dim]."""

    def __init__(self, patch_size, embed_dim):
        super().__init__()
        self.proj = nn.Conv2d(3, embed_dim, patch_size, patch_size)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class Attention(nn.Module):
    """Multi-head self-attention: qkv without bias, each token's q, k and v one after the
    other, softmax(q k^T / sqrt(head_dim)) v per head, the heads side by side, then proj."""

    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        n, tokens, dim = x.shape
        qkv = self.qkv(x).reshape(n, tokens, 3, self.num_heads, dim // self.num_heads)
        qkv = qkv.permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(n, tokens, dim))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.ReLU6()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    """Pre-norm residual block; DropPath is the identity in inference mode, so it is left out."""

    def __init__(self, dim, num_heads, mlp_ratio):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * mlp_ratio)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Module):
    """vit.py's layout: patch embedding, learned position embedding, pre-norm blocks, a last
    LayerNorm, every token flattened, and the feature head Linear -> BatchNorm1d -> Linear ->
    BatchNorm1d (no biases in the Linears, eps 2e-5). mask_token only serves training's random
    masking, which inference (this network's only mode here) never applies."""

    def __init__(self, embed_dim, depth, num_heads, embedding_size, image_size=112,
                 patch_size=9, mlp_ratio=4):
        super().__init__()
        self.num_patches = (image_size // patch_size) ** 2
        self.embed_dim = embed_dim
        self.patch_embed = PatchEmbed(patch_size, embed_dim)
        self.pos_embed = nn.Parameter(torch.zeros(1, self.num_patches, embed_dim))
        self.mask_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.blocks = nn.ModuleList([Block(embed_dim, num_heads, mlp_ratio)
                                     for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim)
        self.feature = nn.Sequential(
            nn.Linear(embed_dim * self.num_patches, embed_dim, bias=False),
            nn.BatchNorm1d(embed_dim, eps=2e-5),
            nn.Linear(embed_dim, embedding_size, bias=False),
            nn.BatchNorm1d(embedding_size, eps=2e-5))

    def forward(self, x):
        n = x.shape[0]
        x = self.patch_embed(x) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        x = torch.reshape(self.norm(x), (n, self.num_patches * self.embed_dim))
        return self.feature(x)


def randomise(net, seed):
    """Weights as a trained network has them: batch norms with scales of both signs, shifts and
    running statistics of their own, PReLU slopes of both signs, layer norms with scales and
    shifts of their own, a position embedding, so that a tensor imported wrongly shows in the
    embeddings."""
    g = torch.Generator().manual_seed(seed)

    def uniform(t, low, high):
        t.copy_(torch.rand(t.shape, generator=g) * (high - low) + low)

    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) *
                               (2.0 / m.weight[0].numel()) ** 0.5)
                if m.bias is not None:
                    uniform(m.bias, -0.2, 0.2)
            elif isinstance(m, nn.PReLU):
                uniform(m.weight, -0.3, 0.5)
            elif isinstance(m, nn.LayerNorm):
                uniform(m.weight, 0.5, 1.5)
                uniform(m.bias, -0.2, 0.2)
            elif isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                uniform(m.weight, 0.5, 1.5)
                m.weight.mul_(torch.where(torch.rand(m.weight.shape, generator=g) < 0.2, -1, 1))
                uniform(m.bias, -0.2, 0.2)
                uniform(m.running_mean, -0.2, 0.2)
                uniform(m.running_var, 0.5, 2.0)
        if isinstance(net, VisionTransformer):
            uniform(net.pos_embed, -0.5, 0.5)
            uniform(net.mask_token, -0.5, 0.5)
        if isinstance(net, IResNet):
            net.features.weight.fill_(1.0)  # arcface_torch freezes it at 1
    return net.eval()
