#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Profile training iterations of the predictor's architectures.

Run with Debian's interpreter (/usr/bin/python3), which has python3-torch,
python3-torchvision and python3-onnx:

    nice /usr/bin/python3 bench/predictor/profile.py --res 224 --out predictor/data/r224

For every architecture of the set (bench/predictor/archs.py; --res 32: the
CIFAR-sized set, --res 224: the ImageNet-sized one) it
  * exports the graph as ONNX in TRAINING mode without weights and writes
    <out>/onnx/<arch>.onnx. The 224x224 set is a plain export
    (torch.onnx.export(model, x, f, training=TRAINING, export_params=False),
    nothing else: the importer infers the shapes itself); the 32x32 set, as
    committed, also ran onnx.shape_inference.infer_shapes(data_prop=True)
    and fixed opset 17 (--infer-shapes --opset 17 reproduces it);
  * times training iterations (forward + cross-entropy + backward + SGD
    step) at several batch sizes, excluding warm-up, and records the median
    (plus min and MAD, to show the noise) in <out>/runs.csv.

Time is the process CPU time of an iteration on one thread
(torch.set_num_threads(1)): the machine is shared, a descheduled process
accrues wall time but not CPU time, and one core is what we can hope to get
to ourselves. With --device cuda the model runs on the first GPU, time is
wall time between torch.cuda.synchronize() calls, and the GPU's properties
go into the CSV's "# device:" line, so `tandemctl predict train` on that CSV
gives a model of that GPU.

Rows are appended as they are measured and architectures already in the
CSV are skipped, so an interrupted run resumes. --wrap CMD runs each
architecture as its own process under CMD (e.g. a lock that keeps other
jobs off the machine while it measures).
"""
import argparse
import ctypes
import inspect
import io
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time
import warnings

warnings.filterwarnings("ignore")

# this file is named like the standard library's profile module, which newer
# torch imports (through cProfile): keep its folder off the front of the path
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE] + [HERE]

import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torchvision  # noqa: E402

import archs  # noqa: E402

WARMUP = 2
REPS = 5
SLOW_S = 1.5      # iterations slower than this: 1 warm-up and median of 3


class Settings:
    """What differs between the two sets."""

    def __init__(self, res):
        self.res = res
        if res == 32:
            self.classes = 10
            self.batches = [2, 4, 8, 16, 32, 64]  # batch 1 takes PyTorch's non-oneDNN path
            self.min_batches = 4   # always the first four batch sizes (Ernest needs a few)
            self.max_iter_s = 1.0  # after those, no larger batch once an iteration exceeds this
            self.hard_max_s = 3.0  # ... and none beyond this at all
        else:
            self.classes = 1000
            self.batches = [1, 2, 4, 8]  # no convolution-path switch below 16 at this size
            self.min_batches = 3   # 1, 2 and 4 always
            self.max_iter_s = 1.0  # 8 only when an iteration at 4 takes under a second
            self.hard_max_s = float("inf")
        # no next batch size when it would take longer than this (it costs
        # about twice the last one): the big models get batch 1 (and 2) only
        self.next_max_s = 10.0 if res == 224 else float("inf")

    def more(self, done, last_s):
        """Whether to time the next batch size after `done` of them, the
        last taking `last_s` per iteration."""
        if last_s > self.hard_max_s or 2 * last_s > self.next_max_s:
            return False
        return done < self.min_batches or last_s <= self.max_iter_s


def export_onnx(model, path, res, infer_shapes, opset, device):
    buf = io.BytesIO()
    # batch 2: training-mode BatchNorm refuses one value per channel (1x1 maps
    # at batch 1); the importer divides FLOPs by the batch dimension
    x = torch.randn(2, 3, res, res, device=device)
    kw = {"opset_version": opset} if opset else {}
    if infer_shapes:  # the 32x32 set as committed
        kw.update(do_constant_folding=False, input_names=["input"], output_names=["logits"])
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw["dynamo"] = False  # the traced graph, as torch < 2.9 exports by default
    torch.onnx.export(model, x, buf, training=torch.onnx.TrainingMode.TRAINING,
                      export_params=False, **kw)
    proto = onnx.load_from_string(buf.getvalue())
    if infer_shapes:
        proto = onnx.shape_inference.infer_shapes(proto, data_prop=True)
    onnx.save(proto, path)
    model.train()  # export toggles modes; time in training mode


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def clock(device):
    """CPU: process CPU time; CUDA: wall time (the GPU does the work)."""
    return time.perf_counter() if device == "cuda" else time.process_time()


def time_batch(model, opt, batch, res, classes, device):
    """Per-iteration time (median, min, MAD) and wall median."""
    x = torch.randn(batch, 3, res, res, device=device)
    y = torch.randint(0, classes, (batch,), device=device)
    loss_fn = nn.CrossEntropyLoss()
    cpu, wall = [], []
    warmup, reps, i = WARMUP, REPS, 0
    while i < warmup + reps:
        sync(device)
        c0, t0 = clock(device), time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        sync(device)
        c1, t1 = clock(device), time.perf_counter()
        if i == 0 and c1 - c0 > SLOW_S:
            warmup, reps = 1, 3  # slow: one warm-up, median of 3
        if i >= warmup:
            cpu.append(c1 - c0)
            wall.append(t1 - t0)
        i += 1
    med = statistics.median(cpu)
    mad = statistics.median(abs(t - med) for t in cpu)
    return med, min(cpu), mad, statistics.median(wall)


def cuda_attr(attr):
    """cudaDeviceGetAttribute of device 0 through the CUDA runtime torch
    loaded (0 when it cannot be found): torch 1.13 does not expose clocks."""
    for lib in ("libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"):
        try:
            rt = ctypes.CDLL(lib)
        except OSError:
            continue
        v = ctypes.c_int(0)
        if rt.cudaDeviceGetAttribute(ctypes.byref(v), attr, 0) == 0:
            return v.value
    return 0


def device_line(device):
    """'# device:' line: name; compute units; clock GHz; memory GB/s - the
    same features libtandem-predict's device query reports (device.c,
    cuda/encoder.cu), so a model trained on this CSV knows its device."""
    if device == "cuda":
        p = torch.cuda.get_device_properties(0)
        clk, memclk, bus = cuda_attr(13), cuda_attr(36), cuda_attr(37)  # kHz, kHz, bits
        return ("# device: %s; units %d; clock_ghz %.3f; mem_bw_gbs %.1f; cc %d.%d; "
                "memory_gib %.1f" % (p.name, p.multi_processor_count, clk / 1e6,
                                     2.0 * memclk * 1e3 * bus / 8 / 1e9, p.major, p.minor,
                                     p.total_memory / 2 ** 30))
    name, mhz = "cpu", 0.0
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and name == "cpu":
                name = line.split(":", 1)[1].strip()
            elif line.startswith("cpu MHz") and not mhz:
                mhz = float(line.split(":", 1)[1])
    return "# device: %s; units %d; clock_ghz %.3f; mem_bw_gbs 0" % (name, os.cpu_count(),
                                                                    mhz / 1000)


def header_lines(st, device):
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    res = "%dx%d" % (st.res, st.res) + (" (inception_v3 299x299)" if st.res == 224 else "")
    return [
        "# tandem predictor profile: training iterations (fwd+loss+bwd+SGD step) on %s" %
        device.upper(),
        "# machine: %s; %d online CPUs; kernel %s" % (cpu, os.cpu_count(), platform.release()),
        device_line(device),
        "# python %s; torch %s; torchvision %s; onnx %s" % (
            platform.python_version(), torch.__version__, torchvision.__version__,
            onnx.__version__),
        "# torch threads 1; input %s; %d classes; batches %s; SGD momentum 0.9; warm-up %d; "
        "median of %d (1 and 3 when an iteration takes > %.1f s); batches beyond the first %d "
        "skipped once an iteration exceeds %.1f s, any beyond %.1f s; none after an iteration "
        "over %.1f s" % (
            res, st.classes, ",".join(map(str, st.batches)), WARMUP, REPS, SLOW_S, st.min_batches, st.max_iter_s,
            st.hard_max_s, st.next_max_s / 2),
        "# time_*_s: %s per iteration; wall_median_s: wall time" % (
            "wall time between CUDA synchronisations" if device == "cuda" else
            "process CPU time (= wall time on a dedicated core)"),
        "# gpus/nodes are 1: single process",
    ]


COLS = ("arch,family,onnx,batch,gpus,nodes,threads,params,time_median_s,time_min_s,time_mad_s,"
        "wall_median_s")


def done_archs(csv):
    """Architectures in `csv` or in the held-out file beside it (runs kept
    out of training are done too)."""
    done = set()
    for path in (csv, os.path.join(os.path.dirname(csv), "heldout.csv")):
        if os.path.exists(path):
            with open(path) as f:
                done |= {ln.split(",")[0] for ln in f
                         if ln.strip() and not ln.startswith(("#", "arch,"))}
    return done


def profile_arch(entry, st, args, csv):
    name, family, build, res = entry
    torch.manual_seed(0)
    model = build(st.classes).to(args.device)
    rel = "onnx/%s.onnx" % name
    try:
        export_onnx(model, os.path.join(args.out, rel), res, args.infer_shapes, args.opset,
                    args.device)
    except Exception as e:  # this torch cannot export it: the same graph from --graphs
        if not args.graphs or not os.path.exists(os.path.join(args.graphs, rel)):
            raise
        print("%s: export failed (%s); graph from %s" % (name, str(e)[:120], args.graphs))
        shutil.copyfile(os.path.join(args.graphs, rel), os.path.join(args.out, rel))
        model.train()
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    rows = []
    for b in st.batches:
        med, mn, mad, wall = time_batch(model, opt, b, res, st.classes, args.device)
        rows.append("%s,%s,%s,%d,1,1,1,%d,%.6f,%.6f,%.6f,%.6f" % (
            name, family, rel, b, params, med, mn, mad, wall))
        if not st.more(len(rows), med):
            break
    with open(csv) as f:
        merged = any(ln.startswith("arch,") and "pass1_s" in ln for ln in f)
    with open(csv, "a") as f:  # a merged CSV: this is pass 1 of these runs
        f.write("\n".join(r + (",%s," % r.split(",")[8] if merged else "") for r in rows) + "\n")
    return rows


def estimate(todo, st, args):
    """Projected CPU time of one pass: one warm-up and one timed iteration
    at batch 1 per architecture, the export timed, the batch policy applied
    with time linear in the batch (an upper bound: it is sublinear here).
    Architectures done in OUT are left out; the graphs go to a temporary
    directory (printed), to check that they import. Not a measurement to
    report; run it under `heavy`."""
    import tempfile
    tmp = tempfile.mkdtemp(prefix="profile-estimate-")
    done = done_archs(os.path.join(args.out, "runs.csv"))
    todo = [t for t in todo if t[0] not in done]
    print("graphs in %s; %d architectures done in %s are left out" % (tmp, len(done), args.out))
    total = 0.0
    print("%-24s %8s %8s %8s %s" % ("arch", "iter1_s", "export_s", "pass_s", "batches"))
    for name, _, build, res in todo:
        torch.manual_seed(0)
        try:
            t0 = time.process_time()
            model = build(st.classes).to(args.device)
            export_onnx(model, os.path.join(tmp, name + ".onnx"), res, args.infer_shapes,
                        args.opset, args.device)
            t_exp = time.process_time() - t0
            opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
            x = torch.randn(1, 3, res, res)
            y = torch.randint(0, st.classes, (1,))
            for _ in range(2):  # the second one when the first (warm-up) was short
                c0 = time.process_time()
                opt.zero_grad(set_to_none=True)
                nn.CrossEntropyLoss()(model(x), y).backward()
                opt.step()
                t1 = time.process_time() - c0
                if t1 > 2.0:
                    break
        except Exception as e:  # an architecture that does not build or export
            print("%-24s FAILED: %s" % (name, str(e)[:200]), flush=True)
            continue
        cost, bs = ESTIMATE_START_S + t_exp, []
        for b in st.batches:
            t = t1 * b
            cost += t * ((1 + 3) if t > SLOW_S else (WARMUP + REPS))
            bs.append(b)
            if not st.more(len(bs), t):
                break
        total += cost
        print("%-24s %8.3f %8.1f %8.1f %s" % (name, t1, t_exp, cost,
                                              ",".join(map(str, bs))), flush=True)
    print("projected: %.1f min of CPU for one pass over %d architectures "
          "(plus each unit's wait for the machine)" % (total / 60, len(todo)))
    return 0


ESTIMATE_START_S = 6.0  # a unit's interpreter start and torch/torchvision/onnx import


def merge(out, other):
    """Combine two passes: time_median_s becomes the smaller of the two
    passes' medians (contention only ever slows an iteration down); both
    passes stay in pass1_s/pass2_s so the noise is on record. Idempotent: a
    CSV merged before keeps its pass1_s and, for runs not in `other`, its
    pass2_s."""
    def read(path):
        head, rows = [], {}
        with open(path) as f:
            for ln in f:
                if ln.startswith("#"):
                    if not ln.startswith("# merged:"):
                        head.append(ln.rstrip("\n"))
                elif ln.strip() and not ln.startswith("arch,"):
                    r = ln.rstrip("\n").split(",")
                    rows[(r[0], int(r[3]))] = r + [""] * (14 - len(r))
        return head, rows
    csv = os.path.join(out, "runs.csv")
    head, a = read(csv)
    _, b = read(os.path.join(other, "runs.csv"))
    rows = []
    for k in list(a) + [k for k in b if k not in a]:
        ra, rb = a.get(k), b.get(k)
        r = list(ra or rb)
        p1 = (ra[12] or ra[8]) if ra else ""
        p2 = rb[8] if rb else ra[13]
        if ra and rb and float(rb[8]) < float(ra[8]):
            r[8:12] = rb[8:12]
        rows.append(r[:12] + [p1, p2])
    diff = sorted(abs(float(r[13]) - float(r[12])) / float(r[12]) for r in rows
                  if r[12] and r[13])
    lines = head + [
        "# merged: two passes; time_median_s = min of the passes' medians; %d runs in both, "
        "mean |pass2 - pass1| / pass1 = %.1f%% (median %.1f%%)" % (
            len(diff), 100 * sum(diff) / len(diff), 100 * diff[len(diff) // 2]),
        COLS + ",pass1_s,pass2_s"] + [",".join(r) for r in rows]
    with open(csv, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("merged %d + %d rows (%d in both)" % (len(a), len(b), len(diff)))


def run_each(todo, args):
    """One process per architecture, under --wrap: each is its own unit."""
    me = [sys.executable, os.path.abspath(__file__), "--res", str(args.res), "--out", args.out,
          "--device", args.device]
    me += ["--infer-shapes"] if args.infer_shapes else []
    me += ["--opset", str(args.opset)] if args.opset else []
    me += ["--batches", args.batches] if args.batches else []
    me += ["--graphs", args.graphs] if args.graphs else []
    todo = [t for t in todo]
    done = done_archs(os.path.join(args.out, "runs.csv"))
    for name, _, _, _ in todo:
        if name in done:
            continue
        cmd = shlex.split(args.wrap) + me + ["--only", name]
        t0 = time.time()
        rc = subprocess.call(cmd)
        print("%s: rc %d, %.1f s wall (with the wait); load %s" % (
            name, rc, time.time() - t0, open("/proc/loadavg").read().split()[0]), flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="predictor/data")
    ap.add_argument("--res", type=int, choices=(32, 224), default=32,
                    help="architecture set: 32x32 (CIFAR-sized) or 224x224 (ImageNet-sized)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--infer-shapes", action="store_true",
                    help="store ONNX shape inference results (the 32x32 set as committed)")
    ap.add_argument("--opset", type=int, default=0, help="ONNX opset (default: torch's)")
    ap.add_argument("--budget-min", type=float, default=80.0)
    ap.add_argument("--graphs", metavar="DIR", help="where an export fails, take the "
                    "architecture's graph from DIR/onnx/ (a set exported elsewhere)")
    ap.add_argument("--batches", help="comma-separated batch sizes instead of the set's "
                    "(a GPU is launch-bound at the CPU set's 1-8)")
    ap.add_argument("--only", help="comma-separated architecture names")
    ap.add_argument("--list", action="store_true", help="print the set's architectures")
    ap.add_argument("--mix", action="store_true", help="order the set round-robin by family "
                    "(a partial run then covers every family)")
    ap.add_argument("--wrap", metavar="CMD", help="profile each architecture as its own "
                    "process, run under CMD")
    ap.add_argument("--merge", metavar="DIR",
                    help="merge DIR/runs.csv, a second pass, into OUT/runs.csv")
    ap.add_argument("--estimate", action="store_true",
                    help="project the CPU time of one pass (time one iteration at batch 1 "
                    "per architecture not done in OUT)")
    ap.add_argument("--export-only", action="store_true",
                    help="re-export the ONNX graphs of the listed architectures, no timing")
    args = ap.parse_args()
    st = Settings(args.res)
    if args.batches:
        st.batches = [int(b) for b in args.batches.split(",")]
    todo = archs.arch_set(args.res)
    if args.only:
        keep = set(args.only.split(","))
        todo = [t for t in todo if t[0] in keep]
    if args.mix:
        fams = {}
        for t in todo:
            fams.setdefault(t[1], []).append(t)
        todo = [f[i] for i in range(max(len(f) for f in fams.values()))
                for f in fams.values() if i < len(f)]
    if args.list:
        print("\n".join("%s %s %d" % (t[0], t[1], t[3]) for t in todo))
        return 0
    if args.merge:
        merge(args.out, args.merge)
        return 0
    if args.device == "cuda" and not torch.cuda.is_available():
        print("--device cuda: no GPU is usable", file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    if args.res == 32:
        archs.static_shuffle()
    if args.estimate:
        return estimate(todo, st, args)
    os.makedirs(os.path.join(args.out, "onnx"), exist_ok=True)
    csv = os.path.join(args.out, "runs.csv")
    if not os.path.exists(csv):
        with open(csv, "w") as f:
            f.write("\n".join(header_lines(st, args.device) + [COLS]) + "\n")
    if args.export_only:
        for name, _, build, res in todo:
            torch.manual_seed(0)
            export_onnx(build(st.classes).to(args.device), os.path.join(
                args.out, "onnx/%s.onnx" % name), res, args.infer_shapes, args.opset,
                args.device)
        return 0
    if args.wrap:
        return run_each(todo, args)
    done = done_archs(csv)
    start = time.time()
    for entry in todo:
        name = entry[0]
        if name in done:
            continue
        if time.time() - start > args.budget_min * 60:
            print("budget exhausted before %s" % name, flush=True)
            break
        t0 = time.time()
        try:
            rows = profile_arch(entry, st, args, csv)
        except Exception as e:  # report and go on: one odd model must not stop the run
            print("%s: FAILED: %s" % (name, str(e)[:200]), flush=True)
            continue
        print("%s: %d batches in %.1f s; last %s" % (name, len(rows), time.time() - t0,
                                                       rows[-1].split(",")[-4]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
