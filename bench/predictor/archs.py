# SPDX-License-Identifier: GPL-2.0
"""Architectures the predictor is trained on (bench/predictor/profile.py).

Two sets:
  arch_set(32)   the original CIFAR-sized set: 44 torchvision classifiers
                 and 32 random DARTS cell networks, 32x32 inputs, 10 classes;
  arch_set(224)  the ImageNet-sized set: torchvision classifiers (inception_v3
                 at 299x299), random DARTS cell networks with the ImageNet
                 stem, ViT/Transformer/MLP-Mixer token models and plain and
                 depthwise CNNs, 224x224 inputs, 1000 classes.

Each entry is (name, family, build, resolution); build(classes) returns the
module. Random architectures are seeded, so a name always means the same
network.
"""
import random

import torch
import torch.nn as nn
import torchvision
from torchvision.models import vision_transformer

# ---------------------------------------------------------------- DARTS


class ReLUConvBN(nn.Sequential):
    def __init__(self, cin, cout, k, stride, pad):
        super().__init__(nn.ReLU(), nn.Conv2d(cin, cout, k, stride, pad, bias=False),
                         nn.BatchNorm2d(cout))


class SepConv(nn.Sequential):
    def __init__(self, c, k, stride, pad):
        super().__init__(
            nn.ReLU(), nn.Conv2d(c, c, k, stride, pad, groups=c, bias=False),
            nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c),
            nn.ReLU(), nn.Conv2d(c, c, k, 1, pad, groups=c, bias=False),
            nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c))


class DilConv(nn.Sequential):
    def __init__(self, c, k, stride, pad, dil):
        super().__init__(
            nn.ReLU(), nn.Conv2d(c, c, k, stride, pad, dilation=dil, groups=c, bias=False),
            nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c))


class FactorizedReduce(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.relu = nn.ReLU()
        self.c1 = nn.Conv2d(cin, cout // 2, 1, 2, bias=False)
        self.c2 = nn.Conv2d(cin, cout - cout // 2, 1, 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        x = self.relu(x)
        return self.bn(torch.cat([self.c1(x), self.c2(x[:, :, 1:, 1:])], dim=1))


def darts_op(name, c, stride):
    if name == "max_pool_3x3":
        return nn.MaxPool2d(3, stride, 1)
    if name == "avg_pool_3x3":
        return nn.AvgPool2d(3, stride, 1, count_include_pad=False)
    if name == "skip_connect":
        return nn.Identity() if stride == 1 else FactorizedReduce(c, c)
    if name.startswith("sep_conv"):
        k = int(name[-1])
        return SepConv(c, k, stride, k // 2)
    k = int(name[-1])
    return DilConv(c, k, stride, k - 1, 2)


DARTS_OPS = ["max_pool_3x3", "avg_pool_3x3", "skip_connect", "sep_conv_3x3",
             "sep_conv_5x5", "dil_conv_3x3", "dil_conv_5x5"]


class Cell(nn.Module):
    def __init__(self, geno, cpp, cp, c, reduction, reduction_prev):
        super().__init__()
        self.pre0 = FactorizedReduce(cpp, c) if reduction_prev else ReLUConvBN(cpp, c, 1, 1, 0)
        self.pre1 = ReLUConvBN(cp, c, 1, 1, 0)
        self.geno = geno
        self.ops = nn.ModuleList()
        for (op, src) in geno:
            stride = 2 if reduction and src < 2 else 1
            self.ops.append(darts_op(op, c, stride))
        self.steps = len(geno) // 2

    def forward(self, s0, s1):
        states = [self.pre0(s0), self.pre1(s1)]
        for i in range(self.steps):
            a, b = 2 * i, 2 * i + 1
            h = self.ops[a](states[self.geno[a][1]]) + self.ops[b](states[self.geno[b][1]])
            states.append(h)
        return torch.cat(states[2:], dim=1)


def random_genotype(rng, steps):
    geno = []
    for i in range(steps):
        for src in rng.sample(range(i + 2), 2):
            geno.append((rng.choice(DARTS_OPS), src))
    return geno


class DartsNet(nn.Module):
    """A DARTS search-space network (Liu et al. 2019) with a random genotype,
    the same family GHN-2's DeepNets-1M samples from. imagenet=True: the
    ImageNet stem of DARTS (three stride-2 convolutions, 224 -> 28) and
    fewer, narrower cells."""

    def __init__(self, seed, classes, imagenet=False):
        super().__init__()
        rng = random.Random(seed)
        if imagenet:
            c = rng.choice([8, 12, 16, 24])
            layers = rng.randint(4, 10)
            steps = rng.randint(2, 4)
        else:
            c = rng.choice([8, 12, 16, 24, 32])
            layers = rng.randint(4, 12)
            steps = rng.randint(2, 5)
        normal, reduce = random_genotype(rng, steps), random_genotype(rng, steps)
        self.desc = "C=%d layers=%d steps=%d" % (c, layers, steps)
        self.imagenet = imagenet
        if imagenet:
            self.stem0 = nn.Sequential(
                nn.Conv2d(3, c // 2, 3, 2, 1, bias=False), nn.BatchNorm2d(c // 2), nn.ReLU(),
                nn.Conv2d(c // 2, c, 3, 2, 1, bias=False), nn.BatchNorm2d(c))
            self.stem1 = nn.Sequential(nn.ReLU(), nn.Conv2d(c, c, 3, 2, 1, bias=False),
                                       nn.BatchNorm2d(c))
            cpp, cp, cc = c, c, c
            red_prev = True
        else:
            cs = 3 * c
            self.stem = nn.Sequential(nn.Conv2d(3, cs, 3, 1, 1, bias=False),
                                      nn.BatchNorm2d(cs))
            cpp, cp, cc = cs, cs, c
            red_prev = False
        self.cells = nn.ModuleList()
        for i in range(layers):
            red = i in (layers // 3, 2 * layers // 3)
            if red:
                cc *= 2
            self.cells.append(Cell(reduce if red else normal, cpp, cp, cc, red, red_prev))
            red_prev = red
            cpp, cp = cp, steps * cc
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cp, classes)

    def forward(self, x):
        if self.imagenet:
            s0 = self.stem0(x)
            s1 = self.stem1(s0)
        else:
            s0 = s1 = self.stem(x)
        for cell in self.cells:
            s0, s1 = s1, cell(s0, s1)
        return self.fc(torch.flatten(self.pool(s1), 1))

# -------------------------------------------------------- token models


class EncoderViT(nn.Module):
    """A ViT built from nn.TransformerEncoderLayer (batch_first, pre- or
    post-norm), mean-pooled tokens: the other way attention gets exported."""

    def __init__(self, classes, res, patch, dim, layers, heads, mlp, norm_first):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, patch, patch)
        self.pos = nn.Parameter(torch.zeros(1, (res // patch) ** 2, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, mlp, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=norm_first)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2) + self.pos
        return self.head(self.norm(self.enc(x)).mean(dim=1))


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim, tok_mlp, ch_mlp):
        super().__init__()
        self.n1 = nn.LayerNorm(dim)
        self.tok = nn.Sequential(nn.Linear(tokens, tok_mlp), nn.GELU(), nn.Linear(tok_mlp, tokens))
        self.n2 = nn.LayerNorm(dim)
        self.ch = nn.Sequential(nn.Linear(dim, ch_mlp), nn.GELU(), nn.Linear(ch_mlp, dim))

    def forward(self, x):                       # x: [B, tokens, dim]
        x = x + self.tok(self.n1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ch(self.n2(x))


class Mixer(nn.Module):
    """MLP-Mixer (Tolstikhin et al. 2021): token- and channel-mixing MLPs."""

    def __init__(self, classes, res, patch, dim, layers, tok_mlp, ch_mlp):
        super().__init__()
        tokens = (res // patch) ** 2
        self.proj = nn.Conv2d(3, dim, patch, patch)
        self.blocks = nn.Sequential(*[MixerBlock(tokens, dim, tok_mlp, ch_mlp)
                                      for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2)
        return self.head(self.norm(self.blocks(x)).mean(dim=1))

# --------------------------------------------------------- plain CNNs


class PlainCNN(nn.Module):
    """Random plain or depthwise-separable CNN: a stride-2 stem, stages that
    halve the resolution, global pooling. depthwise: MobileNet-v1 blocks."""

    def __init__(self, seed, classes, depthwise):
        super().__init__()
        rng = random.Random(1000 + seed)
        width = rng.choice([16, 24, 32, 48])
        stages = rng.randint(3, 5)
        layers = [nn.Conv2d(3, width, 3, 2, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU()]
        c = width
        for s in range(stages):
            out = min(c * 2, 512) if s else c
            for i in range(rng.randint(1, 3)):
                stride = 2 if i == 0 and s > 0 else 1
                if depthwise:
                    layers += [nn.Conv2d(c, c, 3, stride, 1, groups=c, bias=False),
                               nn.BatchNorm2d(c), nn.ReLU(),
                               nn.Conv2d(c, out, 1, bias=False), nn.BatchNorm2d(out), nn.ReLU()]
                else:
                    k = rng.choice([3, 3, 5])
                    layers += [nn.Conv2d(c, out, k, stride, k // 2, bias=False),
                               nn.BatchNorm2d(out), nn.ReLU()]
                c = out
            if not depthwise and rng.random() < 0.5:
                layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))

# ---------------------------------------------------------- torchvision


def static_shuffle():
    """ShuffleNetV2 computes its channel shuffle and split from x.size() at run
    time, which exports as Shape/Slice chains that ONNX shape inference cannot
    resolve, so FLOPs after the first block would be unknown. Same
    computation with the sizes as Python ints (constants in the trace).
    Used for the 32x32 set only; the 224x224 set exports the stock code
    (the importer's own shape inference folds those chains)."""
    from torchvision.models import shufflenetv2 as sn

    def channel_shuffle(x, groups):
        b, c, h, w = (int(s) for s in x.size())
        x = x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous()
        return x.view(b, c, h, w)

    def forward(self, x):
        if self.stride == 1:
            half = int(x.size(1)) // 2
            out = torch.cat((x[:, :half], self.branch2(x[:, half:])), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)

    sn.channel_shuffle = channel_shuffle
    sn.InvertedResidual.forward = forward


def no_stochastic_depth(model):
    """Stochastic depth off (its bernoulli does not export in training mode),
    for builders that fix its probability themselves (swin_t)."""
    from torchvision.ops import StochasticDepth

    for mod in model.modules():
        if isinstance(mod, StochasticDepth):
            mod.p = 0.0
    return model


def tv(name, **kw):
    return lambda classes: no_stochastic_depth(
        getattr(torchvision.models, name)(num_classes=classes, **kw))


def gap(name, in_features):
    """VGG with global average pooling: its 7x7 adaptive pool does not export
    at 32x32 (output larger than input), so the classifier's first Linear
    takes the pooled channels instead (the CIFAR variant)."""
    def build(classes):
        m = getattr(torchvision.models, name)(num_classes=classes)
        m.avgpool = nn.AdaptiveAvgPool2d(1)
        idx = [i for i, layer in enumerate(m.classifier) if isinstance(layer, nn.Linear)][0]
        m.classifier[idx] = nn.Linear(in_features, m.classifier[idx].out_features)
        return m
    return build


def vit(layers, heads, dim, mlp, patch, res=32):
    return lambda classes: vision_transformer.VisionTransformer(
        image_size=res, patch_size=patch, num_layers=layers, num_heads=heads,
        hidden_dim=dim, mlp_dim=mlp, num_classes=classes)


NOSD = {"stochastic_depth_prob": 0.0}
TORCHVISION_32 = [
    ("resnet18", tv("resnet18")), ("resnet34", tv("resnet34")), ("resnet50", tv("resnet50")),
    ("resnet101", tv("resnet101")), ("resnext50_32x4d", tv("resnext50_32x4d")),
    ("wide_resnet50_2", tv("wide_resnet50_2")),
    ("vgg11_gap", gap("vgg11", 512)), ("vgg11_bn_gap", gap("vgg11_bn", 512)),
    ("vgg13_bn_gap", gap("vgg13_bn", 512)), ("vgg16_bn_gap", gap("vgg16_bn", 512)),
    ("densenet121", tv("densenet121")),
    ("densenet169", tv("densenet169")), ("squeezenet1_0", tv("squeezenet1_0")),
    ("squeezenet1_1", tv("squeezenet1_1")), ("mobilenet_v2", tv("mobilenet_v2")),
    ("mobilenet_v3_small", tv("mobilenet_v3_small")),
    ("mobilenet_v3_large", tv("mobilenet_v3_large")), ("mnasnet0_5", tv("mnasnet0_5")),
    ("mnasnet0_75", tv("mnasnet0_75")), ("mnasnet1_0", tv("mnasnet1_0")),
    ("mnasnet1_3", tv("mnasnet1_3")), ("shufflenet_v2_x0_5", tv("shufflenet_v2_x0_5")),
    ("shufflenet_v2_x1_0", tv("shufflenet_v2_x1_0")),
    ("shufflenet_v2_x1_5", tv("shufflenet_v2_x1_5")),
    ("shufflenet_v2_x2_0", tv("shufflenet_v2_x2_0")),
    ("efficientnet_b0", tv("efficientnet_b0", **NOSD)),
    ("efficientnet_b1", tv("efficientnet_b1", **NOSD)),
    ("efficientnet_b2", tv("efficientnet_b2", **NOSD)),
    ("efficientnet_b3", tv("efficientnet_b3", **NOSD)),
    ("efficientnet_v2_s", tv("efficientnet_v2_s", **NOSD)),
    ("regnet_x_400mf", tv("regnet_x_400mf")), ("regnet_x_800mf", tv("regnet_x_800mf")),
    ("regnet_x_1_6gf", tv("regnet_x_1_6gf")), ("regnet_x_3_2gf", tv("regnet_x_3_2gf")),
    ("regnet_y_400mf", tv("regnet_y_400mf")), ("regnet_y_800mf", tv("regnet_y_800mf")),
    ("regnet_y_1_6gf", tv("regnet_y_1_6gf")), ("regnet_y_3_2gf", tv("regnet_y_3_2gf")),
    ("googlenet", tv("googlenet", aux_logits=False, init_weights=True)),
    ("convnext_tiny", tv("convnext_tiny", **NOSD)),
    ("vit_l6_d192_p4", vit(6, 3, 192, 768, 4)), ("vit_l4_d128_p8", vit(4, 4, 128, 512, 8)),
    ("vit_l8_d256_p4", vit(8, 4, 256, 1024, 4)), ("vit_l6_d384_p8", vit(6, 6, 384, 1536, 8)),
]
DARTS_SEEDS_32 = list(range(1, 33))

# The ImageNet-sized set: torchvision's classifiers whose training iteration
# takes at most ~4 s per sample on one core of this machine (resnext50_32x4d,
# convnext_tiny and swin_t take 8-9 s and are left out), stock code (dynamic
# shapes included).
TORCHVISION_224 = [
    "resnet18", "resnet34", "resnet50", "densenet121", "alexnet", "vgg11",
    "squeezenet1_0", "squeezenet1_1", "mobilenet_v2", "mobilenet_v3_small",
    "mobilenet_v3_large", "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3",
    "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0",
    "efficientnet_b0", "efficientnet_b1", "efficientnet_b2", "regnet_x_400mf",
    "regnet_x_800mf", "regnet_x_1_6gf", "regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf",
    "googlenet", "inception_v3",
    # the big ones (4-9 s per sample): batch 1, maybe 2 (profile.py's next_max_s)
    "resnet101", "resnext50_32x4d", "wide_resnet50_2", "vgg16", "densenet169",
    "efficientnet_b3", "regnet_x_3_2gf", "regnet_y_3_2gf", "convnext_tiny",
]
TV_KW_224 = {
    "googlenet": {"aux_logits": False, "init_weights": True},
    "inception_v3": {"aux_logits": False, "init_weights": True},
    "efficientnet_b0": NOSD, "efficientnet_b1": NOSD, "efficientnet_b2": NOSD,
    "efficientnet_b3": NOSD, "convnext_tiny": NOSD,
}
RES_224 = {"inception_v3": 299}
DARTS_SEEDS_224 = list(range(101, 133))
TOKENS_224 = [
    ("vit16_l6_d192", "token", vit(6, 3, 192, 768, 16, 224)),
    ("vit16_l4_d256", "token", vit(4, 4, 256, 1024, 16, 224)),
    ("vit32_l8_d384", "token", vit(8, 6, 384, 1536, 32, 224)),
    ("vit32_l6_d256", "token", vit(6, 4, 256, 1024, 32, 224)),
    ("encvit16_l6_d192_pre", "token",
     lambda k: EncoderViT(k, 224, 16, 192, 6, 3, 768, norm_first=True)),
    ("encvit16_l4_d256_post", "token",
     lambda k: EncoderViT(k, 224, 16, 256, 4, 4, 512, norm_first=False)),
    ("mixer16_l6_d256", "token", lambda k: Mixer(k, 224, 16, 256, 6, 128, 1024)),
    ("mixer32_l8_d512", "token", lambda k: Mixer(k, 224, 32, 512, 8, 256, 2048)),
    ("mixer16_l4_d384", "token", lambda k: Mixer(k, 224, 16, 384, 4, 192, 1536)),
    ("mixer32_l4_d256", "token", lambda k: Mixer(k, 224, 32, 256, 4, 128, 1024)),
    # cheaper ones (49 tokens, or few layers)
    ("vit32_l4_d192", "token", vit(4, 3, 192, 768, 32, 224)),
    ("vit32_l12_d192", "token", vit(12, 3, 192, 768, 32, 224)),
    ("vit16_l2_d128", "token", vit(2, 2, 128, 512, 16, 224)),
    ("encvit32_l6_d256_pre", "token",
     lambda k: EncoderViT(k, 224, 32, 256, 6, 4, 1024, norm_first=True)),
    ("encvit32_l8_d384_post", "token",
     lambda k: EncoderViT(k, 224, 32, 384, 8, 6, 1536, norm_first=False)),
    ("encvit16_l2_d128_pre", "token",
     lambda k: EncoderViT(k, 224, 16, 128, 2, 2, 512, norm_first=True)),
    ("mixer32_l6_d384", "token", lambda k: Mixer(k, 224, 32, 384, 6, 192, 1536)),
    ("mixer16_l2_d192", "token", lambda k: Mixer(k, 224, 16, 192, 2, 96, 768)),
]
PLAIN_SEEDS_224 = list(range(1, 13))


def arch_set(res):
    """[(name, family, build(classes), resolution)] of the set at `res`."""
    if res == 32:
        out = [(n, "torchvision", b, 32) for n, b in TORCHVISION_32]
        out += [("darts%03d" % s, "darts", (lambda k, s=s: DartsNet(s, k)), 32)
                for s in DARTS_SEEDS_32]
        return out
    out = [(n, "torchvision", tv(n, **TV_KW_224.get(n, {})), RES_224.get(n, 224))
           for n in TORCHVISION_224]
    out += [("darts%03d" % s, "darts", (lambda k, s=s: DartsNet(s, k, imagenet=True)), 224)
            for s in DARTS_SEEDS_224]
    out += [(n, f, b, 224) for n, f, b in TOKENS_224]
    out += [("plain%02d" % s, "plain", (lambda k, s=s: PlainCNN(s, k, False)), 224)
            for s in PLAIN_SEEDS_224]
    out += [("dwconv%02d" % s, "plain", (lambda k, s=s: PlainCNN(s, k, True)), 224)
            for s in PLAIN_SEEDS_224]
    return out
