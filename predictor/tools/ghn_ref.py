#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""PyTorch reference of the predictor's GHN-2 encoder and regressor.

Reads GHN-2 graphs in the text format (tandemctl predict graph X.onnx),
draws fixed random weights, and writes
  <out>/model.tpm     the weights in the model file format (version 1)
  <out>/expected.txt  graph vectors and regressor outputs computed here
so that selftests/host/test_predict_golden.c can check the C encoder
without torch. Everything the C code derives from a graph (distances,
buckets, sweep order) is recomputed here independently. Computation is in
float64 from the float32 weights stored in the file.

    /usr/bin/python3 predictor/tools/ghn_ref.py --out predictor/data/golden \\
        predictor/data/golden/resnet18.txt ...
"""
import argparse
import math
import os
import struct
import sys
import zlib
from collections import deque

import torch

PRIMS = ["max_pool", "avg_pool", "sep_conv", "dil_conv", "conv", "msa", "cse", "sum",
         "concat", "input", "bias", "bn", "ln", "pos_enc", "glob_avg"]
S_MAX = 50
BUCKETS = 16
DEV_FEATS = 3
JOBS = [(1, 1, 1), (8, 1, 1), (64, 4, 2)]   # (batch, gpus, nodes) per graph


def read_graph(path):
    nodes, stats = {}, (0.0, 0.0, 0.0)
    with open(path) as f:
        assert f.readline().startswith("tandem-graph 1")
        for line in f:
            w = line.split("#")[0].split()
            if not w:
                continue
            if w[0] == "stats":
                stats = tuple(float(x) for x in w[1:4])
            elif w[0] == "node":
                preds = [int(x) for x in w[8:]] if len(w) > 7 and w[7] == "<-" else []
                nodes[int(w[1])] = (PRIMS.index(w[2]), [int(x) for x in w[3:7]], preds)
    n = len(nodes)
    prim = [nodes[v][0] for v in range(n)]
    shape = [nodes[v][1] for v in range(n)]
    pred = [sorted(set(nodes[v][2])) for v in range(n)]
    for v in range(n):
        assert all(u < v for u in pred[v]), "text graph must be topologically numbered"
    return prim, shape, pred, stats


def bucket(k, v):
    if v <= 0:
        return 0
    if k >= 2:
        return min(v, BUCKETS - 1)
    b = 1
    while v > 1 and b < BUCKETS - 1:
        v >>= 1
        b += 1
    return b


def distances(succ):
    """Virtual edges: (u, v, s) for directed shortest paths u->v of length 2..S_MAX."""
    out = []
    for s in range(len(succ)):
        dist = {s: 0}
        q = deque([s])
        while q:
            u = q.popleft()
            if dist[u] >= 2:
                out.append((s, u, dist[u]))
            if dist[u] == S_MAX:
                continue
            for w in succ[u]:
                if w not in dist:
                    dist[w] = dist[u] + 1
                    q.append(w)
    return out


def layout(d, h, nin):
    return [("op_emb", (len(PRIMS), d)), ("shape_emb", (4, BUCKETS, d // 4)),
            ("msg_w1", (d, d)), ("msg_b1", (d,)), ("msg_w2", (d, d)), ("msg_b2", (d,)),
            ("sp_w1", (d, d)), ("sp_b1", (d,)), ("sp_w2", (d, d)), ("sp_b2", (d,)),
            ("gru_wih", (3 * d, d)), ("gru_whh", (3 * d, d)),
            ("gru_bih", (3 * d,)), ("gru_bhh", (3 * d,)), ("ln_g", (d,)), ("ln_b", (d,)),
            ("reg_w1", (h, nin)), ("reg_b1", (h,)), ("reg_w2", (h, h)), ("reg_b2", (h,)),
            ("reg_w3", (1, h)), ("reg_b3", (1,))]


def make_weights(d, h, nin, gen):
    w = {}
    for name, shp in layout(d, h, nin):
        scale = 1.0 if "emb" in name else 1.0 / math.sqrt(shp[-1] if len(shp) > 1 else d)
        t = (torch.rand(shp, generator=gen, dtype=torch.float64) * 2 - 1) * scale
        if name == "ln_g":
            t = 1 + 0.1 * t
        w[name] = t.float().double()  # what the float32 file will hold
    return w


def mlp(w, p, x):
    return torch.relu(x @ w[p + "_w1"].T + w[p + "_b1"]) @ w[p + "_w2"].T + w[p + "_b2"]


def gru(w, x, h):
    cell = torch.nn.GRUCell(x.shape[0], h.shape[0]).double()
    with torch.no_grad():
        cell.weight_ih.copy_(w["gru_wih"])
        cell.weight_hh.copy_(w["gru_whh"])
        cell.bias_ih.copy_(w["gru_bih"])
        cell.bias_hh.copy_(w["gru_bhh"])
        return cell(x[None], h[None])[0]


def sweep(w, order, nb, vnb, hin, d):
    hout, a, b = {}, {}, {}
    for v in order:
        m = torch.zeros(d, dtype=torch.float64)
        for u in nb[v]:
            m = m + a[u]
        for u, s in vnb[v]:
            m = m + b[u] / s
        hout[v] = gru(w, m, hin[v])
        a[v] = mlp(w, "msg", hout[v])
        b[v] = mlp(w, "sp", hout[v])
    return hout


def encode(w, prim, shape, pred, d):
    n = len(prim)
    succ = [[] for _ in range(n)]
    for v in range(n):
        for u in pred[v]:
            succ[u].append(v)
    vpred, vsucc = [[] for _ in range(n)], [[] for _ in range(n)]
    for u, v, s in distances(succ):
        vpred[v].append((u, s))
        vsucc[u].append((v, s))
    q = d // 4
    h0 = {}
    for v in range(n):
        e = [w["shape_emb"][k, bucket(k, shape[v][k])] for k in range(4)]
        h0[v] = w["op_emb"][prim[v]] + torch.cat(e)
    h1 = sweep(w, range(n), pred, vpred, h0, d)
    h2 = sweep(w, reversed(range(n)), succ, vsucc, h1, d)
    y = torch.nn.functional.layer_norm(torch.stack([h2[v] for v in range(n)]), (d,),
                                       w["ln_g"], w["ln_b"], eps=1e-5)
    assert q * 4 == d
    return y.mean(0)


def features(job, stats, n, dev):
    batch, gpus, nodes = job
    x = [math.log(batch), math.log(gpus), math.log(nodes)]
    x += [math.log1p(f) for f in dev]
    x += [math.log1p(stats[0]), math.log1p(stats[1]), math.log1p(stats[2]), math.log(n)]
    return x


def regress(w, x):
    z = torch.relu(x @ w["reg_w1"].T + w["reg_b1"])
    z = torch.relu(z @ w["reg_w2"].T + w["reg_b2"])
    return float(z @ w["reg_w3"][0] + w["reg_b3"][0])


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def write_model(path, w, d, h, nfeat, mean, std, dev):
    hdr = bytearray(288)
    hdr[0:8] = b"TNDMPRED"
    nparams = sum(t.numel() for t in w.values())
    struct.pack_into("<IIIIII", hdr, 8, 1, d, h, 3, 1, nfeat)
    struct.pack_into("<Q", hdr, 32, nparams)
    hdr[40:40 + 24] = b"golden reference weights"
    struct.pack_into("<ddd", hdr, 168, *dev)
    hdr[192:192 + 6] = b"golden"
    body = struct.pack("<%df" % nfeat, *mean) + struct.pack("<%df" % nfeat, *std)
    for name, _ in layout(d, h, d + nfeat):
        body += struct.pack("<%df" % w[name].numel(), *w[name].flatten().tolist())
    data = bytes(hdr) + body
    with open(path, "wb") as f:
        f.write(data + struct.pack("<I", zlib.crc32(data)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--hid", type=int, default=16)
    ap.add_argument("--reg-hidden", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("graphs", nargs="+")
    args = ap.parse_args()
    d, h, nfeat = args.hid, args.reg_hidden, 6 + 4
    gen = torch.Generator().manual_seed(args.seed)
    w = make_weights(d, h, d + nfeat, gen)
    mean = [f32(x) for x in (torch.rand(nfeat, generator=gen, dtype=torch.float64) * 4).tolist()]
    std = [f32(x) for x in (0.5 + torch.rand(nfeat, generator=gen, dtype=torch.float64)).tolist()]
    dev = [2.0, 2.5, 0.0]
    os.makedirs(args.out, exist_ok=True)
    write_model(os.path.join(args.out, "model.tpm"), w, d, h, nfeat, mean, std, dev)
    lines = ["# golden vectors from predictor/tools/ghn_ref.py (torch %s), hid %d" %
             (torch.__version__, d)]
    for path in args.graphs:
        prim, shape, pred, stats = read_graph(path)
        g = encode(w, prim, shape, pred, d)
        name = os.path.basename(path)
        lines.append("graph %s %s" % (name, " ".join("%.9e" % x for x in g.tolist())))
        for job in JOBS:
            raw = features(job, stats, len(prim), dev)
            xn = [(r - mu) / sd for r, mu, sd in zip(raw, mean, std)]
            x = torch.cat([g, torch.tensor(xn, dtype=torch.float64)])
            lines.append("pred %s %d %d %d %.9e" % (name, *job, regress(w, x)))
    with open(os.path.join(args.out, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
