#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Data-parallel runs for the predictor's all-reduce term (Documentation/predictor.md).

torch.distributed with the gloo backend on loopback (127.0.0.1 only), one
thread per worker process, DistributedDataParallel (buckets, overlap with
the backward pass, as users run it).

    /usr/bin/python3 bench/predictor/ddp.py --out DIR --all [--reps 3] [--arch A,B,...]
        the repeatable protocol: --reps rounds; each round measures the
        gloo all-reduce once, then every architecture in turn (so a slow
        phase of the host is spread over all of them instead of holding
        one architecture's repeats), each in three modes run one after the
        other in an order that rotates with the round:
          1     one worker, no DDP (what the single-worker predictor models)
          1x2   two independent one-worker processes at once, no DDP (the
                compute of a worker when two share the cores, no communication)
          2     two DDP workers
        The number of timed iterations is fixed per architecture in round 0
        from the 1-worker time (at least --min-seconds of timed iterations,
        10 to 200 of them, after 3 warm-up iterations) and kept for every
        run. --no-broadcast-buffers: DDP without the buffers' broadcast
        before each forward, to measure what it costs. Rows (one per run:
        median wall and CPU time per iteration, the host's steal share and
        load during it) go to DIR/runs.csv.
    /usr/bin/python3 bench/predictor/ddp.py --out DIR --allreduce
        one gloo all-reduce sweep of 2 workers, 64 KiB..64 MiB (DIR/allreduce.csv)
    /usr/bin/python3 bench/predictor/ddp.py --out DIR --report
        the ring fitted to allreduce.csv (least squares over every point,
        T = S/B + 2a for p = 2) and, per architecture, the median over rounds
        of each mode, the 2-worker range, and the predicted 2-worker
        iteration (1-worker iteration + the formula) against the measured
        one; also with the 1x2 time in place of the 1-worker time, which
        separates the formula's error from CPU sharing. Directories written
        by the earlier one-shot protocol (predictor/data/ddp) are reported
        as before.

Run it on an otherwise idle machine; the rows record load and steal so a
disturbed run can be seen.

The workers run with glibc's allocator held in its steady state
(MALLOC_MMAP_THRESHOLD_=32 MiB, MALLOC_TRIM_THRESHOLD_=4 GiB, set before the
workers start; --malloc default leaves the environment as it is). Without
it a fresh process returns its large tensors to the kernel after each
iteration and faults them in again in the next one until glibc's dynamic
threshold has risen: squeezenet1_1's 1-worker iteration measured 0.021-0.030 s
in fresh processes and 0.011 s with the allocator held, and which runs are
still in that phase (DDP's buckets raise the threshold sooner) decided
whether 2 workers looked faster than 1.
"""
import argparse
import os
import socket
import statistics
import sys
import time
import warnings

warnings.filterwarnings("ignore")

# torch and the architectures: imported by load_torch() where something is
# measured (main, and each spawned worker); --report reads CSV files only and
# does without the 3-5 s an import of torch takes
torch = dist = mp = nn = archs = None


def load_torch():
    global torch, dist, mp, nn, archs
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import archs

WARMUP = 3
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(4 << 30)}
MODES = ("1", "1x2", "2")
# The 14 architectures of the measured all-reduce runs (Documentation/results/predictor.md,
# "The distributed term against data-parallel runs").
DEFAULT_ARCHS = ("resnet18,mobilenet_v2,squeezenet1_1,vgg11_bn_gap,resnet34,squeezenet1_0,"
                 "mnasnet1_0,shufflenet_v2_x1_0,efficientnet_b0,regnet_x_400mf,googlenet,"
                 "vit_l4_d128_p8,darts001,densenet121")


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


def worker(rank, world, ddp, port, name, batch, iters, min_s, start, q, bcast=True):
    """One worker. ddp: join a process group of `world` and wrap the model in
    DDP; otherwise the `world` processes are independent and only start their
    timed loop together (`start`, a barrier). iters = 0: time until min_s
    seconds of timed iterations (10..200) and report how many ran."""
    load_torch()
    torch.set_num_threads(1)
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    if ddp:
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                                world_size=world)
    model, res = build(name)
    model.train()
    net = nn.parallel.DistributedDataParallel(model, broadcast_buffers=bcast) if ddp else model
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(batch, 3, res, res)
    y = torch.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()
    wall, cpu = [], []
    if start is not None:
        start.wait()
    i = 0
    while True:
        if ddp:
            dist.barrier()
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        loss_fn(net(x), y).backward()
        opt.step()
        t1, c1 = time.perf_counter(), time.process_time()
        if i >= WARMUP:
            wall.append(t1 - t0)
            cpu.append(c1 - c0)
        i += 1
        n = len(wall)
        if iters and n >= iters:
            break
        if not iters and n >= 10 and (sum(wall) >= min_s or n >= 200):
            break
    q.put((rank, statistics.median(wall), statistics.median(cpu), len(wall),
           sum(p.numel() for p in model.parameters())))
    if ddp:
        dist.destroy_process_group()


def cpu_stat():
    v = [int(a) for a in open("/proc/stat").readline().split()[1:9]]
    return sum(v), v[7]  # total, steal (user nice system idle iowait irq softirq steal)


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def run(mode, name, batch, iters, min_s, bcast=True):
    """One run of `mode`; returns (wall, cpu, iters, params, steal share, load).
    For 1x2 the times are the mean of the two processes' medians."""
    world = 1 if mode == "1" else 2
    ddp = mode == "2"
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    start = ctx.Barrier(world) if mode == "1x2" else None
    port = free_port()
    load = loadavg()
    tot0, st0 = cpu_stat()
    ps = [ctx.Process(target=worker, args=(r, world, ddp, port, name, batch, iters, min_s,
                                           start, q, bcast)) for r in range(world)]
    for p in ps:
        p.start()
    res = [q.get() for _ in range(world)]
    for p in ps:
        p.join()
        if p.exitcode != 0:
            raise SystemExit("%s mode %s: worker exited with %d" % (name, mode, p.exitcode))
    tot1, st1 = cpu_stat()
    steal = (st1 - st0) / max(1, tot1 - tot0)
    if mode == "2":
        res = [r for r in res if r[0] == 0]  # DDP workers wait for each other
    wall = statistics.mean(r[1] for r in res)
    cpu = statistics.mean(r[2] for r in res)
    return wall, cpu, res[0][3], res[0][4], steal, load


def ar_worker(rank, port, sizes, q):
    load_torch()
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


def allreduce(out, rnd=None):
    sizes = [1 << k for k in range(16, 27, 2)]  # 64 KiB .. 64 MiB
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    load = loadavg()
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
        for n, t in res:
            f.write("%d,%.6f,%s\n" % (n, t, load))
    print("allreduce%s: %s" % ("" if rnd is None else " (round %d)" % rnd,
                               ", ".join("%d KiB %.4f s" % (n >> 10, t) for n, t in res)),
          flush=True)


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


def ring_term(params, bw, lat):
    # p = 2: 2 (p - 1) / p * S / B + 2 (p - 1) a, S = 4 bytes per parameter
    return 4.0 * params / bw + 2 * lat


def summary(label, errs):
    errs = sorted(abs(e) for e in errs)
    return "%s: mean |error| %.1f %% over %d architectures (median %.1f %%, max %.1f %%)" % (
        label, 100 * sum(errs) / len(errs), len(errs), 100 * statistics.median(errs),
        100 * errs[-1])


def report_oneshot(path, bw, lat):
    print("| architecture | params | 1 worker | 2 workers, measured | predicted | error |")
    print("|---|---|---|---|---|---|")
    errs = []
    with open(path) as f:
        for ln in f:
            if ln.startswith(("#", "arch,")):
                continue
            r = ln.rstrip("\n").split(",")
            params, t1, t2 = int(r[3]), float(r[4]), float(r[6])
            pred = t1 + ring_term(params, bw, lat)
            err = (pred - t2) / t2
            errs.append(err)
            print("| %s | %.1f M | %.3f s | %.3f s | %.3f s | %+.1f %% |" % (
                r[0], params / 1e6, t1, t2, pred, 100 * err))
    print(summary("2-worker iteration", errs))


def report(out):
    bw, lat = fit_ring(os.path.join(out, "allreduce.csv"))
    print("ring fitted to allreduce.csv: B = %.3f GB/s, a = %.2f ms" % (bw / 1e9, lat * 1e3))
    path = os.path.join(out, "runs.csv")
    with open(path) as f:
        lines = [ln.rstrip("\n") for ln in f if not ln.startswith("#")]
    if lines and lines[0].startswith("arch,onnx,"):
        report_oneshot(path, bw, lat)
        return 0
    hdr = lines[0].split(",")
    rows = [dict(zip(hdr, ln.split(","))) for ln in lines[1:] if ln]
    order, by = [], {}
    for r in rows:
        if r["arch"] not in by:
            order.append(r["arch"])
            by[r["arch"]] = {m: [] for m in MODES}
        by[r["arch"]][r["mode"]].append(r)
    steal = [float(r["steal"]) for r in rows]
    loads = [float(r["load"]) for r in rows]
    print("%d runs; steal share per run %.3f-%.3f (median %.3f); load %.2f-%.2f" % (
        len(rows), min(steal), max(steal), statistics.median(steal), min(loads), max(loads)))
    print("| architecture | params | iters | 1 worker | 1x2 (shared cores) | 2 workers, "
          "median [range] | all-reduce term | predicted | error | with 1x2 | error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    errs, errs_sh, spreads, flips = [], [], [], 0
    for a in order:
        m = by[a]
        if not all(m[k] for k in MODES):
            continue
        med = {k: statistics.median(float(r["wall_s"]) for r in m[k]) for k in MODES}
        t2s = [float(r["wall_s"]) for r in m["2"]]
        params = int(m["1"][0]["params"])
        ar = ring_term(params, bw, lat)
        pred, pred_sh = med["1"] + ar, med["1x2"] + ar
        e, e_sh = (pred - med["2"]) / med["2"], (pred_sh - med["2"]) / med["2"]
        errs.append(e)
        errs_sh.append(e_sh)
        spreads.append((max(t2s) - min(t2s)) / med["2"])
        flips += med["2"] < med["1"]
        print("| %s | %.1f M | %s | %.3f s | %.3f s | %.3f s [%.3f-%.3f] | %.3f s | %.3f s | "
              "%+.1f %% | %.3f s | %+.1f %% |" % (
                  a, params / 1e6, m["1"][0]["iters"], med["1"], med["1x2"], med["2"],
                  min(t2s), max(t2s), ar, pred, 100 * e, pred_sh, 100 * e_sh))
    print(summary("predicted from the 1-worker time", errs))
    print(summary("predicted from the 1x2 time", errs_sh))
    print("2-worker spread over rounds, (max - min) / median: median %.1f %%, max %.1f %%" % (
        100 * statistics.median(spreads), 100 * max(spreads)))
    print("architectures with 2 workers faster than 1 (medians): %d of %d" % (flips, len(errs)))
    return 0


def measure_all(out, names, reps, batch, min_s, bcast, steady):
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "runs.csv")
    if os.path.exists(path):
        raise SystemExit("%s exists: --all writes a new directory" % path)
    with open(path, "w") as f:
        f.write("# DistributedDataParallel, gloo, 127.0.0.1, 1 thread per worker, 32x32 "
                "inputs, batch %d per worker, warm-up %d, %d rounds, modes 1 / 1x2 / 2 "
                "rotated per round;%s allocator %s; wall_s, cpu_s: median per iteration over the run\n"
                "arch,batch,params,round,mode,iters,wall_s,cpu_s,steal,load\n" % (
                    batch, WARMUP, reps, "" if bcast else " DDP broadcast_buffers=False;",
                    " ".join("%s=%s" % kv for kv in sorted(MALLOC_ENV.items()))
                    if steady else "default"))
    iters = {}
    t_start = time.time()
    for rnd in range(reps):
        allreduce(out, rnd)
        for k, name in enumerate(names):
            modes = MODES[(rnd + k) % 3:] + MODES[:(rnd + k) % 3]
            for mode in modes:
                n = iters.get(name, 0)
                if not n and mode != "1":
                    # the count comes from a 1-worker run (0: time-bounded)
                    n = run("1", name, batch, 0, min_s)[2]
                w, c, n, params, steal, load = run(mode, name, batch, n, min_s, bcast)
                iters[name] = n
                with open(path, "a") as f:
                    f.write("%s,%d,%d,%d,%s,%d,%.6f,%.6f,%.4f,%s\n" % (
                        name, batch, params, rnd, mode, n, w, c, steal, load))
                print("round %d %-20s mode %-3s %3d iters: %.4f s (cpu %.4f s, steal %.3f, "
                      "load %s) [%.0f s]" % (rnd, name, mode, n, w, c, steal, load,
                                             time.time() - t_start), flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="predictor/data/ddp")
    ap.add_argument("--arch", help="comma-separated architectures (32x32 set)")
    ap.add_argument("--all", action="store_true", help="the repeatable protocol")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--min-seconds", type=float, default=3.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--allreduce", action="store_true")
    ap.add_argument("--no-broadcast-buffers", action="store_true",
                    help="DDP(broadcast_buffers=False): no broadcast of the buffers (BatchNorm's "
                    "running statistics) from rank 0 before each forward")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--malloc", choices=("steady", "default"), default="steady",
                    help="steady (default): glibc allocator held in its steady state")
    args = ap.parse_args()
    if args.malloc == "steady":
        os.environ.update(MALLOC_ENV)  # inherited by the spawned workers
    if args.report:
        return report(args.out)
    if not (args.allreduce or args.all):
        ap.error("one of --all, --allreduce, --report")
    load_torch()
    if args.allreduce:
        os.makedirs(args.out, exist_ok=True)
        allreduce(args.out)
        return 0
    if args.all:
        if args.reps < 1 or args.batch < 1 or args.min_seconds <= 0:
            raise SystemExit("--reps, --batch and --min-seconds must be positive")
        names = (args.arch or DEFAULT_ARCHS).split(",")
        known = {n for n, _, _, _ in archs.arch_set(32)}
        bad = [n for n in names if n not in known]
        if bad:
            raise SystemExit("unknown architecture(s): " + ",".join(bad))
        return measure_all(args.out, names, args.reps, args.batch, args.min_seconds,
                           not args.no_broadcast_buffers, args.malloc == "steady")


if __name__ == "__main__":
    sys.exit(main())
