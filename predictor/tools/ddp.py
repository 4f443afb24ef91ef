#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Data-parallel runs for the predictor's all-reduce term (Documentation/predictor.md).

torch.distributed with the gloo backend on loopback (127.0.0.1 only), one
thread per worker process, DistributedDataParallel (buckets, overlap with
the backward pass, as users run it):

    /usr/bin/python3 predictor/tools/ddp.py --out predictor/data/ddp --arch resnet18
        one architecture (32x32 set): training iterations with 1 worker
        (no DDP) and with 2 workers, per-worker batch --batch; wall time
        (workers wait for each other), median over iterations
    /usr/bin/python3 predictor/tools/ddp.py --out predictor/data/ddp --allreduce
        gloo all-reduce of 2 workers for message sizes 64 KiB..64 MiB, to
        fit the ring's bandwidth and per-step latency
    /usr/bin/python3 predictor/tools/ddp.py --out predictor/data/ddp --report
        the ring fitted to allreduce.csv (least squares, T = S/B + 2a for
        p = 2) and, per architecture, the predicted 2-worker iteration
        (1-worker iteration + the formula) against the measured one

Rows go to <out>/runs.csv and <out>/allreduce.csv; each call is one unit
(run each under a lock that keeps other jobs off the machine).
"""
import argparse
import os
import socket
import statistics
import sys
import time
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn as nn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import archs  # noqa: E402

WARMUP, REPS = 2, 7


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build(name):
    archs.static_shuffle()
    for n, _, b, res in archs.arch_set(32):
        if n == name:
            torch.manual_seed(0)
            return b(10), res
    raise SystemExit("unknown architecture " + name)


def worker(rank, world, port, name, batch, q):
    torch.set_num_threads(1)
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    if world > 1:
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                                world_size=world)
    model, res = build(name)
    model.train()
    net = nn.parallel.DistributedDataParallel(model) if world > 1 else model
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(batch, 3, res, res)
    y = torch.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()
    wall, cpu = [], []
    for i in range(WARMUP + REPS):
        if world > 1:
            dist.barrier()
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        loss_fn(net(x), y).backward()
        opt.step()
        t1, c1 = time.perf_counter(), time.process_time()
        if i >= WARMUP:
            wall.append(t1 - t0)
            cpu.append(c1 - c0)
    if rank == 0:
        q.put((statistics.median(wall), statistics.median(cpu),
               sum(p.numel() for p in model.parameters())))
    if world > 1:
        dist.destroy_process_group()


def run(world, name, batch):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    ps = [ctx.Process(target=worker, args=(r, world, port, name, batch, q))
          for r in range(world)]
    for p in ps:
        p.start()
    out = q.get()
    for p in ps:
        p.join()
    return out


def ar_worker(rank, port, sizes, q):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=2)
    res = []
    for n in sizes:
        t = torch.ones(n // 4)
        ts = []
        for i in range(3 + 9):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(t)
            if i >= 3:
                ts.append(time.perf_counter() - t0)
        res.append((n, statistics.median(ts)))
    if rank == 0:
        q.put(res)
    dist.destroy_process_group()


def allreduce(out):
    sizes = [1 << k for k in range(16, 27, 2)]  # 64 KiB .. 64 MiB
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    ps = [ctx.Process(target=ar_worker, args=(r, port, sizes, q)) for r in range(2)]
    for p in ps:
        p.start()
    res = q.get()
    for p in ps:
        p.join()
    path = os.path.join(out, "allreduce.csv")
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write("# gloo all_reduce, 2 processes on 127.0.0.1, median of 9\n"
                    "bytes,seconds,load\n")
        load = open("/proc/loadavg").read().split()[0]
        for n, t in res:
            f.write("%d,%.6f,%s\n" % (n, t, load))
            print("allreduce %d bytes: %.4f s" % (n, t))


def fit_ring(path):
    """Least-squares line T = c0 + c1 S through allreduce.csv; for p = 2
    the ring term is 2(p-1)/p S/B + 2(p-1) a = S/B + 2a."""
    pts = []
    with open(path) as f:
        for ln in f:
            if ln[0].isdigit():
                b, t = ln.split(",")[:2]
                pts.append((float(b), float(t)))
    n = len(pts)
    mx = sum(b for b, _ in pts) / n
    my = sum(t for _, t in pts) / n
    c1 = sum((b - mx) * (t - my) for b, t in pts) / sum((b - mx) ** 2 for b, _ in pts)
    c0 = my - c1 * mx
    return 1.0 / c1, c0 / 2  # B (bytes/s), a (s)


def report(out):
    bw, lat = fit_ring(os.path.join(out, "allreduce.csv"))
    print("ring fitted to allreduce.csv: B = %.3f GB/s, a = %.2f ms" % (bw / 1e9, lat * 1e3))
    print("| architecture | params | 1 worker | 2 workers, measured | predicted | error |")
    print("|---|---|---|---|---|---|")
    errs = []
    with open(os.path.join(out, "runs.csv")) as f:
        for ln in f:
            if ln.startswith(("#", "arch,")):
                continue
            r = ln.rstrip("\n").split(",")
            params, t1, t2 = int(r[3]), float(r[4]), float(r[6])
            # p = 2: 2 (p - 1) / p * S / B + 2 (p - 1) a, S = 4 bytes per parameter
            pred = t1 + 4.0 * params / bw + 2 * lat
            err = (pred - t2) / t2
            errs.append(abs(err))
            print("| %s | %.1f M | %.3f s | %.3f s | %.3f s | %+.1f %% |" % (
                r[0], params / 1e6, t1, t2, pred, 100 * err))
    errs.sort()
    print("mean |error| %.1f %% over %d architectures (median %.1f %%, max %.1f %%)" % (
        100 * sum(errs) / len(errs), len(errs), 100 * errs[len(errs) // 2], 100 * errs[-1]))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="predictor/data/ddp")
    ap.add_argument("--arch")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--allreduce", action="store_true")
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args()
    if args.report:
        return report(args.out)
    os.makedirs(args.out, exist_ok=True)
    if args.allreduce:
        allreduce(args.out)
        return 0
    w1, c1, params = run(1, args.arch, args.batch)
    w2, c2, _ = run(2, args.arch, args.batch)
    path = os.path.join(args.out, "runs.csv")
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write("# DistributedDataParallel, gloo, 127.0.0.1, 1 thread per worker, "
                    "32x32 inputs, warm-up %d, median of %d; wall time\n"
                    "arch,onnx,batch,params,t1_wall_s,t1_cpu_s,t2_wall_s,t2_cpu_s,load\n" %
                    (WARMUP, REPS))
        f.write("%s,onnx/%s.onnx,%d,%d,%.6f,%.6f,%.6f,%.6f,%s\n" % (
            args.arch, args.arch, args.batch, params, w1, c1, w2, c2,
            open("/proc/loadavg").read().split()[0]))
    print("%s: 1 worker %.4f s, 2 workers %.4f s" % (args.arch, w1, w2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
