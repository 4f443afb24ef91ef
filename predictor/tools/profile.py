#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Profile training iterations of torchvision and random DARTS-style networks.

Run with Debian's interpreter (/usr/bin/python3), which has python3-torch,
python3-torchvision and python3-onnx:

    nice /usr/bin/python3 predictor/tools/profile.py --out predictor/data

For every architecture it
  * exports the graph as ONNX in TRAINING mode without weights
    (export_params=False; eval-mode export would fold BatchNorm away), runs
    ONNX shape inference so intermediate shapes are recorded (the predictor
    reads them to count FLOPs), and writes <out>/onnx/<arch>.onnx;
  * times training iterations (forward + cross-entropy + backward + SGD
    step) at several batch sizes, excluding warm-up, and records the median
    (plus min and MAD, to show the noise) in <out>/runs.csv.

One thread (torch.set_num_threads(1)): the machine is shared, and one core
is what we can hope to get reasonably to ourselves. Rows are appended as
they are measured and architectures already in the CSV are skipped, so an
interrupted run resumes.
"""
import argparse
import io
import os
import platform
import random
import statistics
import sys
import time
import warnings

warnings.filterwarnings("ignore")

import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torchvision  # noqa: E402
from torchvision.models import vision_transformer  # noqa: E402

RES = 32          # input resolution (CIFAR-sized): keeps CPU runs short
CLASSES = 10
BATCHES = [2, 4, 8, 16, 32, 64]  # batch 1 takes PyTorch's non-oneDNN conv path
WARMUP = 2
REPS = 5
MIN_BATCHES = 4   # always measure the first four batch sizes (Ernest needs a few)
MAX_ITER_S = 1.0  # after those, skip larger batches once an iteration takes longer
HARD_MAX_S = 3.0  # ... and stop at any batch size beyond this
SLOW_S = 1.5      # iterations slower than this: 1 warm-up and median of 3

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
    the same family GHN-2's DeepNets-1M samples from."""

    def __init__(self, seed):
        super().__init__()
        rng = random.Random(seed)
        c = rng.choice([8, 12, 16, 24, 32])
        layers = rng.randint(4, 12)
        steps = rng.randint(2, 5)
        normal, reduce = random_genotype(rng, steps), random_genotype(rng, steps)
        self.desc = "C=%d layers=%d steps=%d" % (c, layers, steps)
        cs = 3 * c
        self.stem = nn.Sequential(nn.Conv2d(3, cs, 3, 1, 1, bias=False), nn.BatchNorm2d(cs))
        cpp, cp, cc = cs, cs, c
        self.cells = nn.ModuleList()
        red_prev = False
        for i in range(layers):
            red = i in (layers // 3, 2 * layers // 3)
            if red:
                cc *= 2
            self.cells.append(Cell(reduce if red else normal, cpp, cp, cc, red, red_prev))
            red_prev = red
            cpp, cp = cp, steps * cc
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cp, CLASSES)

    def forward(self, x):
        s0 = s1 = self.stem(x)
        for cell in self.cells:
            s0, s1 = s1, cell(s0, s1)
        return self.fc(torch.flatten(self.pool(s1), 1))

# ---------------------------------------------------------- torchvision


def static_shuffle():
    """ShuffleNetV2 computes its channel shuffle and split from x.size() at run
    time, which exports as Shape/Slice chains that ONNX shape inference cannot
    resolve, so FLOPs after the first block would be unknown. Same
    computation with the sizes as Python ints (constants in the trace)."""
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


def tv(name, **kw):
    return lambda: getattr(torchvision.models, name)(num_classes=CLASSES, **kw)


def gap(name, in_features):
    """VGG with global average pooling: its 7x7 adaptive pool does not export
    at 32x32 (output larger than input), so the classifier's first Linear
    takes the pooled channels instead (the CIFAR variant)."""
    def build():
        m = getattr(torchvision.models, name)(num_classes=CLASSES)
        m.avgpool = nn.AdaptiveAvgPool2d(1)
        idx = [i for i, layer in enumerate(m.classifier) if isinstance(layer, nn.Linear)][0]
        m.classifier[idx] = nn.Linear(in_features, m.classifier[idx].out_features)
        return m
    return build


def vit(layers, heads, dim, mlp, patch):
    return lambda: vision_transformer.VisionTransformer(
        image_size=RES, patch_size=patch, num_layers=layers, num_heads=heads,
        hidden_dim=dim, mlp_dim=mlp, num_classes=CLASSES)


NOSD = {"stochastic_depth_prob": 0.0}
TORCHVISION = [
    ("resnet18", tv("resnet18")), ("resnet34", tv("resnet34")), ("resnet50", tv("resnet50")),
    ("resnet101", tv("resnet101")), ("resnext50_32x4d", tv("resnext50_32x4d")),
    ("wide_resnet50_2", tv("wide_resnet50_2")),
    ("vgg11_gap", gap("vgg11", 512)), ("vgg11_bn_gap", gap("vgg11_bn", 512)),
    ("vgg13_bn_gap", gap("vgg13_bn", 512)), ("vgg16_bn_gap", gap("vgg16_bn", 512)), ("densenet121", tv("densenet121")),
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
DARTS_SEEDS = list(range(1, 33))

# ------------------------------------------------------------- profiling


def export_onnx(model, path):
    buf = io.BytesIO()
    # batch 2: training-mode BatchNorm refuses one value per channel (1x1 maps
    # at batch 1); the importer divides FLOPs by the batch dimension
    torch.onnx.export(model, torch.randn(2, 3, RES, RES), buf, export_params=False,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      opset_version=17, input_names=["input"], output_names=["logits"])
    proto = onnx.shape_inference.infer_shapes(onnx.load_from_string(buf.getvalue()),
                                              data_prop=True)
    onnx.save(proto, path)
    model.train()  # export toggles modes; time in training mode


def time_batch(model, opt, batch):
    """Per-iteration process CPU time (median, min, MAD) and wall median.

    CPU time, not wall time: the machine is shared, and a descheduled
    process accrues wall time but not CPU time. With one thread, CPU time
    is the wall time the iteration takes on a core of its own."""
    x = torch.randn(batch, 3, RES, RES)
    y = torch.randint(0, CLASSES, (batch,))
    loss_fn = nn.CrossEntropyLoss()
    cpu, wall = [], []
    warmup, reps, i = WARMUP, REPS, 0
    while i < warmup + reps:
        c0, t0 = time.process_time(), time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        c1, t1 = time.process_time(), time.perf_counter()
        if i == 0 and c1 - c0 > SLOW_S:
            warmup, reps = 1, 3  # slow: one warm-up, median of 3
        if i >= warmup:
            cpu.append(c1 - c0)
            wall.append(t1 - t0)
        i += 1
    med = statistics.median(cpu)
    mad = statistics.median(abs(t - med) for t in cpu)
    return med, min(cpu), mad, statistics.median(wall)


def header_lines():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return [
        "# tandem predictor profile: training iterations (fwd+loss+bwd+SGD step) on CPU",
        "# machine: %s; %d online CPUs; kernel %s" % (cpu, os.cpu_count(), platform.release()),
        "# python %s; torch %s; torchvision %s; onnx %s" % (
            platform.python_version(), torch.__version__, torchvision.__version__,
            onnx.__version__),
        "# torch threads 1; input %dx%d; %d classes; SGD momentum 0.9; warm-up %d; "
        "median of %d (1 and 3 when an iteration takes > %.1f s); batches beyond the first %d skipped once an iteration exceeds %.1f s, "
        "any beyond %.1f s" % (RES, RES, CLASSES, WARMUP, REPS, SLOW_S, MIN_BATCHES,
                               MAX_ITER_S, HARD_MAX_S),
        "# time_*_s: process CPU time per iteration (= wall time on a dedicated core); "
        "wall_median_s: wall time, inflated by other jobs on this shared machine",
        "# gpus/nodes are 1: single CPU process; device features are the CPU's",
    ]


COLS = ("arch,family,onnx,batch,gpus,nodes,threads,params,time_median_s,time_min_s,time_mad_s,"
        "wall_median_s")


def done_archs(csv):
    if not os.path.exists(csv):
        return set()
    with open(csv) as f:
        return {ln.split(",")[0] for ln in f if ln and not ln.startswith(("#", "arch,"))}


def profile_arch(name, family, build, out, csv):
    torch.manual_seed(0)
    model = build()
    rel = "onnx/%s.onnx" % name
    export_onnx(model, os.path.join(out, rel))
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    rows = []
    for b in BATCHES:
        med, mn, mad, wall = time_batch(model, opt, b)
        rows.append("%s,%s,%s,%d,1,1,1,%d,%.6f,%.6f,%.6f,%.6f" % (
            name, family, rel, b, params, med, mn, mad, wall))
        if med > HARD_MAX_S or (len(rows) >= MIN_BATCHES and med > MAX_ITER_S):
            break
    with open(csv, "a") as f:
        f.write("\n".join(rows) + "\n")
    return rows


def merge(out, other):
    """Combine two passes: time_median_s becomes the smaller of the two
    passes' medians (contention only ever slows an iteration down); both
    passes stay in pass1_s/pass2_s so the noise is on record."""
    def read(path):
        head, rows = [], {}
        with open(path) as f:
            for ln in f:
                if ln.startswith("#"):
                    head.append(ln.rstrip("\n"))
                elif not ln.startswith("arch,"):
                    r = ln.rstrip("\n").split(",")
                    rows[(r[0], int(r[3]))] = r
        return head, rows
    csv = os.path.join(out, "runs.csv")
    head, a = read(csv)
    _, b = read(os.path.join(other, "runs.csv"))
    both = [k for k in a if k in b]
    diff = [abs(float(b[k][8]) - float(a[k][8])) / float(a[k][8]) for k in both]
    lines = head + [
        "# merged: two passes; time_median_s = min of the passes' medians; %d runs in both, "
        "mean |pass2 - pass1| / pass1 = %.1f%%" % (len(both), 100 * sum(diff) / len(diff)),
        COLS + ",pass1_s,pass2_s"]
    for k in list(a) + [k for k in b if k not in a]:
        ra, rb = a.get(k), b.get(k)
        r = list(ra or rb)[:12]
        t1, t2 = (ra[8] if ra else ""), (rb[8] if rb else "")
        if ra and rb and float(rb[8]) < float(ra[8]):
            r[8:12] = rb[8:12]
        lines.append(",".join(r + [t1, t2]))
    with open(csv, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("merged %d + %d rows (%d in both)" % (len(a), len(b), len(both)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="predictor/data")
    ap.add_argument("--budget-min", type=float, default=80.0)
    ap.add_argument("--only", help="comma-separated architecture names")
    ap.add_argument("--merge", metavar="DIR",
                    help="merge DIR/runs.csv, a second pass, into OUT/runs.csv")
    ap.add_argument("--export-only", action="store_true",
                    help="re-export the ONNX graphs of the listed architectures, no timing")
    args = ap.parse_args()
    torch.set_num_threads(1)
    static_shuffle()
    os.makedirs(os.path.join(args.out, "onnx"), exist_ok=True)
    csv = os.path.join(args.out, "runs.csv")
    if not os.path.exists(csv):
        with open(csv, "w") as f:
            f.write("\n".join(header_lines() + [COLS]) + "\n")
    todo = [(n, "torchvision", b) for n, b in TORCHVISION]
    todo += [("darts%03d" % s, "darts", (lambda s=s: DartsNet(s))) for s in DARTS_SEEDS]
    if args.only:
        keep = set(args.only.split(","))
        todo = [t for t in todo if t[0] in keep]
    if args.merge:
        merge(args.out, args.merge)
        return 0
    if args.export_only:
        for name, family, build in todo:
            torch.manual_seed(0)
            export_onnx(build(), os.path.join(args.out, "onnx/%s.onnx" % name))
        return 0
    done = done_archs(csv)
    start = time.time()
    for name, family, build in todo:
        if name in done:
            continue
        if time.time() - start > args.budget_min * 60:
            print("budget exhausted before %s" % name, flush=True)
            break
        t0 = time.time()
        try:
            rows = profile_arch(name, family, build, args.out, csv)
        except Exception as e:  # report and go on: one odd model must not stop the run
            print("%s: FAILED: %s" % (name, str(e)[:200]), flush=True)
            continue
        print("%s: %d batches in %.1f s; last %s" % (name, len(rows), time.time() - t0,
                                                       rows[-1].split(",")[-4]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
