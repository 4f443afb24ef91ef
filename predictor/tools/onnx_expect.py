#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Expected import results of the committed ONNX graphs, from python3-onnx.

For every graph under predictor/data (DIRS below, or the folders given) this
parses the file with onnx's own protobuf code and writes one line to
predictor/data/onnx_expect.txt:

  DIR/ARCH onnx_nodes=N inputs=I ops=Op:count,... ghn_nodes=G ghn_edges=E
       prims=prim:count,... params=P flops=F acts=A flops_by=F1,F2,F3,F4,F5

and the shape of every node output, in node order, to
predictor/data/shape_expect.txt ("DIR/ARCH d0xd1x.. ..." , "[]" a scalar).

The op histogram checks the C protobuf reader. Shapes are onnx's own
infer_shapes(data_prop=True) on the graph with its value_info removed (a
plain export); where onnx leaves a shape unknown because it does not fold
the arithmetic behind it (Div, Where, Equal on shape values), the values are
computed here with numpy, put back as Constant nodes and onnx infers again,
until nothing changes. The GHN-2 numbers come from a second, independent
implementation of the import rules of Documentation/predictor.md (tensor
classes, contraction, primitive mapping, FLOPs) on those shapes, so
selftests/host/test_predict_onnx.c compares two codes written from one
specification rather than the C code with itself.

    /usr/bin/python3 predictor/tools/onnx_expect.py predictor/data [DIR ...] [--out OUTDIR]
"""
import collections
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

# FLOPs by kind of product (enum tp_flop_class): Conv 1x1 of one group,
# larger Conv of one group, grouped Conv, Gemm/MatMul with a parameter,
# MatMul of two activations
FLOP_CLASSES = ["conv1", "convk", "group", "linear", "matmul"]
PRIMS = ["max_pool", "avg_pool", "sep_conv", "dil_conv", "conv", "msa", "cse", "sum",
         "concat", "input", "bias", "bn", "ln", "pos_enc", "glob_avg"]


# ------------------------------------------------ shapes (onnx + numpy folding)

FOLD_MAX = 64  # values folded of a tensor, as the importer


def _np_dtype(t):
    """numpy dtype of an ONNX element type (onnx < 1.13 has only the mapping table)"""
    f = getattr(onnx.helper, "tensor_dtype_to_np_dtype", None)
    return f(t) if f else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t]


def _attr(n, name, default=None):
    for a in n.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _np_eval(n, vals, shp):
    """numpy value of node n's first output from known input values, or None."""
    op, ins = n.op_type, list(n.input)
    if op == "Constant":
        t = _attr(n, "value")
        if t is not None:
            return numpy_helper.to_array(t)
        for k in ("value_int", "value_ints", "value_float", "value_floats"):
            v = _attr(n, k)
            if v is not None:
                return np.array(v)
        return None
    if op == "Shape":
        s = shp.get(ins[0])
        if s is None or any(d < 0 for d in s):
            return None
        lo, hi = _attr(n, "start", 0), _attr(n, "end", len(s))
        return np.array(s[lo:hi] if hi != len(s) else s[lo:], dtype=np.int64)
    if op == "Size":
        s = shp.get(ins[0])
        return None if s is None or any(d < 0 for d in s) else np.array(np.prod(s), np.int64)
    x = [vals.get(i) if i else None for i in ins]
    if not ins or x[0] is None:
        return None
    need = {"Gather": 2, "Unsqueeze": 2, "Squeeze": 1, "Slice": 3, "Reshape": 2,
            "Expand": 2, "Where": 3, "Range": 3}
    if any(v is None for v in x[:need.get(op, len(ins))]):
        return None
    if op in ("Identity", "Cast", "Neg", "Floor", "Ceil", "Abs", "Sqrt", "Not"):
        f = {"Identity": lambda a: a, "Neg": np.negative, "Floor": np.floor, "Ceil": np.ceil,
             "Abs": np.abs, "Sqrt": np.sqrt, "Not": np.logical_not}
        if op == "Cast":
            return x[0].astype(_np_dtype(_attr(n, "to")))
        return f[op](x[0])
    if op in ("Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater", "Max", "Min", "Pow"):
        a, b = x[0], x[1]
        if op == "Div" and a.dtype.kind in "iu" and b.dtype.kind in "iu":
            return (np.trunc(a / b)).astype(a.dtype)
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
             "Equal": np.equal, "Less": np.less, "Greater": np.greater, "Max": np.maximum,
             "Min": np.minimum, "Pow": np.power}[op]
        return f(a, b).astype(a.dtype) if op not in ("Equal", "Less", "Greater") else f(a, b)
    if op == "Mod":  # fmod=0: the sign of the divisor, as Python's %
        return (np.fmod if _attr(n, "fmod", 0) else np.mod)(x[0], x[1])
    if op == "Where":
        return np.where(x[0], x[1], x[2])
    if op == "Gather":
        return np.take(x[0], x[1], axis=_attr(n, "axis", 0))
    if op == "Unsqueeze":
        return np.expand_dims(x[0], tuple(int(a) for a in x[1]))
    if op == "Squeeze":
        return np.squeeze(x[0], tuple(int(a) for a in x[1]) if len(ins) > 1 else None)
    if op == "Concat":
        return np.concatenate(x, axis=_attr(n, "axis", 0)) if all(v is not None for v in x) \
            else None
    if op == "Slice":
        axes = x[3] if len(x) > 3 and x[3] is not None else range(len(x[1]))
        steps = x[4] if len(x) > 4 and x[4] is not None else [1] * len(x[1])
        sl = [slice(None)] * x[0].ndim
        for s0, e0, a, st in zip(x[1], x[2], axes, steps):
            sl[int(a)] = slice(int(s0), int(e0), int(st))
        return x[0][tuple(sl)]
    if op == "Reshape":
        return x[0].reshape([int(d) for d in x[1]])
    if op == "ConstantOfShape":
        t = _attr(n, "value")
        v = numpy_helper.to_array(t) if t is not None else np.zeros(1, np.float32)
        return np.full([int(d) for d in x[0]], v.reshape(-1)[0], dtype=v.dtype)
    if op == "Expand":
        return x[0] * np.ones([int(d) for d in x[1]], dtype=x[0].dtype)
    if op == "Range":
        return np.arange(x[0], x[1], x[2])
    return None


def _shape_map(m):
    out = {}
    for v in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output):
        t = v.type.tensor_type
        if v.type.HasField("tensor_type") and t.HasField("shape"):
            out[v.name] = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
    for t in m.graph.initializer:
        out.setdefault(t.name, list(t.dims))
    return out


def infer_shapes(model):
    """onnx's shapes of a plain export, with numpy folding where onnx stops."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    folded = set()
    while True:
        m = onnx.shape_inference.infer_shapes(m, data_prop=True)
        shp, vals, new = _shape_map(m), {}, []
        for i, n in enumerate(m.graph.node):
            v = _np_eval(n, vals, shp)
            if v is None or v.size > FOLD_MAX or not n.output:
                continue
            vals[n.output[0]] = v
            if n.op_type != "Constant" and n.output[0] not in folded:
                new.append((i, v))
        if not new:
            return shp
        for i, v in new:  # replace the node by a Constant of its value
            n = m.graph.node[i]
            folded.add(n.output[0])
            c = onnx.helper.make_node("Constant", [], [n.output[0]], name=n.name,
                                      value=numpy_helper.from_array(np.asarray(v)))
            m.graph.node.remove(n)
            m.graph.node.insert(i, c)
        del m.graph.value_info[:]


def shapes(g):
    out = {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        if v.name in out or not v.type.HasField("tensor_type"):
            continue
        t = v.type.tensor_type
        if not t.HasField("shape"):
            continue
        out[v.name] = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
    for t in g.initializer:
        out.setdefault(t.name, list(t.dims))
    return out


def numel(s):
    if s is None or any(d < 0 for d in s):
        return None
    n = 1
    for d in s:
        n *= d
    return n


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


class Importer:
    def __init__(self, model):
        g = model.graph
        self.g = g
        self.shape = infer_shapes(model)
        self.kind, self.leaf, self.rep = {}, {}, {}
        self.nodes, self.edges = [], set()
        self.trainable = set()
        self.flops = self.acts = 0.0
        self.flops_by = [0.0] * len(FLOP_CLASSES)
        inits = {t.name for t in g.initializer}
        for t in inits:
            self.kind[t], self.leaf[t] = "param", t
        self.batch = 1
        first = True
        for i, v in enumerate(g.input):
            if v.name in inits:
                continue
            if not inits and i > 0:
                self.kind[v.name], self.leaf[v.name] = "param", v.name
                continue
            self.kind[v.name] = "act"
            self.rep[v.name] = {self.add("input", [0, 0, 0, 0])}
            s = self.shape.get(v.name)
            if first and s and s[0] > 0:
                self.batch = s[0]
            first = False

    def add(self, prim, shp):
        self.nodes.append((prim, shp))
        return len(self.nodes) - 1

    def is_param(self, ins, i):
        return 0 <= i < len(ins) and ins[i] and self.kind.get(ins[i]) == "param"

    def classify(self, n, ins, nact):
        op = n.op_type
        params = [i for i in range(len(ins)) if self.is_param(ins, i)]
        p = params[0] if params else -1
        prim, wi, bias = None, -1, None
        if op in ("Conv", "ConvTranspose"):
            dil = attr(n, "dilations", []) or []
            prim = "dil_conv" if any(x > 1 for x in dil) else (
                "sep_conv" if attr(n, "group", 1) > 1 else "conv")
            wi = 1 if self.is_param(ins, 1) else -1
            bias = ins[2] if self.is_param(ins, 2) else None
        elif op == "Gemm" or (op == "MatMul" and p >= 0):
            prim = "conv"
            wi = 1 if self.is_param(ins, 1) else p
            bias = ins[2] if self.is_param(ins, 2) else None
        elif op in ("BatchNormalization", "InstanceNormalization", "GroupNormalization"):
            prim, wi = "bn", (1 if self.is_param(ins, 1) else -1)
        elif op == "LayerNormalization":
            prim, wi = "ln", (1 if self.is_param(ins, 1) else -1)
        elif op in ("MaxPool", "GlobalMaxPool"):
            prim = "max_pool"
        elif op == "AveragePool":
            prim = "avg_pool"
        elif op == "GlobalAveragePool":
            prim = "glob_avg"
        elif op == "Softmax":
            prim = "msa"
        elif op in ("Add", "Sum"):
            if nact >= 2:
                prim = "sum"
            elif p >= 0:
                s = self.shape.get(self.leaf[ins[p]]) or []
                prim, wi = ("pos_enc" if sum(d > 1 for d in s) >= 2 else "bias"), p
        elif op == "Mul":
            acts = [x for x in ins if x and self.kind.get(x) == "act"]
            if nact >= 2:
                a, b = (numel(self.shape.get(x)) for x in acts[:2])
                if a is not None and b is not None and a != b:
                    prim = "cse"
            elif p >= 0:
                prim, wi = "cse", p
        elif op == "Concat":
            if nact >= 2 or p >= 0:
                prim = "concat"
        elif op == "Gather" and self.is_param(ins, 0):
            prim, wi = "conv", 0
        w = self.leaf[ins[wi]] if wi >= 0 else None
        return prim, wi, w, (self.leaf[bias] if bias else None)

    def node_shape(self, n, prim, wi, w):
        s = self.shape.get(w) if w else None
        if s is None:
            return [0, 0, 0, 0]
        if prim not in ("conv", "sep_conv", "dil_conv", "pos_enc"):
            e = numel(s)
            return [e if e and e > 0 else 0, 0, 0, 0]
        d, started = [], False
        for i, x in enumerate(s):
            if started or x != 1 or len(s) - i <= 2:
                d.append(x)
                started = True
        swap = (n.op_type == "Gemm" and not attr(n, "transB", 0)) or \
            (n.op_type == "MatMul" and wi == 1)
        if swap and len(d) >= 2:
            d[-2], d[-1] = d[-1], d[-2]
        d = [x if x > 0 else 0 for x in d[:4]]
        return d + [0] * (4 - len(d))

    def op_flops(self, n, prim, wi, w, ins, out):
        """(FLOPs, index in FLOP_CLASSES)"""
        eo = numel(self.shape.get(out))
        if prim in ("conv", "sep_conv", "dil_conv") and w:
            self.weighted += 1
            ws = self.shape.get(w)
            ew = numel(ws)
            if eo is None or ew is None or not ws:
                return 0, 3
            self.weighted_shaped += 1
            cls = 3
            if n.op_type in ("Conv", "ConvTranspose"):
                k = ew / ws[0] if ws[0] else 0
                cls = 2 if attr(n, "group", 1) > 1 else (0 if numel(ws[2:]) == 1 else 1)
            elif n.op_type == "Gather":
                k = 0
            elif n.op_type == "Gemm":
                k = ws[1 if attr(n, "transB", 0) else 0] if len(ws) == 2 else 0
            elif n.op_type == "MatMul" and wi == 1 and len(ws) >= 2:
                k = ws[-2]
            else:
                k = ws[-1]
            return 2.0 * eo * k, cls
        if n.op_type == "MatMul" and len(ins) == 2 and ins[0] and eo is not None:
            a = self.shape.get(ins[0])
            if a and a[-1] >= 0:
                return 2.0 * eo * a[-1], 4
        return 0, 3

    def run(self):
        self.weighted = self.weighted_shaped = 0
        for n in self.g.node:
            ins = list(n.input)
            nact = sum(1 for x in ins if x and self.kind.get(x) == "act")
            if n.op_type in ("Shape", "Size"):  # they read no values: constants
                nact = 0
            if nact == 0:
                ps = [x for x in ins if x and self.kind.get(x) == "param"]
                for o in n.output:
                    if o:
                        self.kind[o] = "param" if ps else "const"
                        self.leaf[o] = self.leaf[ps[0]] if ps else None
                continue
            prim, wi, w, bias = self.classify(n, ins, nact)
            for i, x in enumerate(ins):
                if x and self.kind.get(x) == "param" and self.leaf.get(x) and \
                        not (n.op_type == "BatchNormalization" and i >= 3):
                    self.trainable.add(self.leaf[x])
            preds = set()
            for x in ins:
                if x and self.kind.get(x) == "act":
                    preds |= self.rep[x]
            if prim is None:
                rep = set(preds)
            else:
                v = self.add(prim, self.node_shape(n, prim, wi, w))
                self.edges |= {(u, v) for u in preds}
                if bias:
                    b = self.add("bias", [numel(self.shape.get(bias)) or 0, 0, 0, 0])
                    self.edges.add((v, b))
                    v = b
                rep = {v}
            outs = [o for o in n.output if o]
            for o in outs:
                self.kind[o], self.rep[o] = "act", rep
            if outs:
                eo = numel(self.shape.get(outs[0]))
                if eo is not None:
                    self.acts += eo
                f, cls = self.op_flops(n, prim, wi, w, ins, outs[0])
                self.flops += f
                self.flops_by[cls] += f
        params = sum(numel(self.shape.get(t)) or 0 for t in self.trainable)
        return params, self.flops / self.batch, self.acts / self.batch


def fmt_shape(s):
    if s is None or any(d < 0 for d in s):
        return "?"
    return "x".join(str(d) for d in s) if s else "[]"


def line(path, data):
    model = onnx.load(path)
    g = model.graph
    ops = collections.Counter(n.op_type for n in g.node)
    imp = Importer(model)
    params, flops, acts = imp.run()
    prims = collections.Counter(p for p, _ in imp.nodes)
    arch = os.path.splitext(os.path.relpath(path, data))[0]
    outs = [o for n in g.node for o in n.output if o]
    shape_line = arch + " " + " ".join(fmt_shape(imp.shape.get(o)) for o in outs)
    return "%s onnx_nodes=%d inputs=%d ops=%s ghn_nodes=%d ghn_edges=%d prims=%s " \
        "params=%d flops=%.17g acts=%.17g flops_by=%s" % (
            arch, len(g.node), len(g.input),
            ",".join("%s:%d" % kv for kv in sorted(ops.items())),
            len(imp.nodes), len(imp.edges),
            ",".join("%s:%d" % (p, prims[p]) for p in PRIMS if prims[p]),
            params, flops, acts,
            ",".join("%.17g" % (f / imp.batch) for f in imp.flops_by)), shape_line


# the committed graph folders; python3-onnx 1.12 (Debian 12's) knows opsets up
# to 17, so h200-2026-12-04/onnx (opset 20) was done by onnx 1.23.1 on the GPU
# node (--out) and its lines appended: Documentation/predictor.md
DIRS = ["onnx", "r224/onnx", "r224-2026-12-03/onnx"]


def main():
    args = sys.argv[1:]
    out = None
    if "--out" in args:  # elsewhere (an onnx too old for a set's opset runs it there)
        i = args.index("--out")
        out = args[i + 1]
        del args[i:i + 2]
    data = args[0] if args else "predictor/data"
    dirs = args[1:] or DIRS
    head = "# predictor/tools/onnx_expect.py with onnx %s: %s" % (onnx.__version__,
                                                                 " ".join(dirs))
    lines, shp = [head], [head]
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(data, d, "*.onnx"))):
            a, b = line(path, data)
            lines.append(a)
            shp.append(b)
    out = out or data
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "onnx_expect.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "shape_expect.txt"), "w") as f:
        f.write("\n".join(shp) + "\n")
    print("%d graphs" % (len(lines) - 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
