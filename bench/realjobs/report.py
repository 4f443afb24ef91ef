#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tables (markdown) from bench/realjobs/measure.sh's results.jsonl: the median
and range over the repetitions of each configuration.

  report.py [build/bench/realjobs/results.jsonl]
"""
import json
import re
import statistics
import sys
from collections import defaultdict

MIB = 1048576.0


def mr(xs, f="{:.2f}"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "–"
    s = f.format(statistics.median(xs))
    return s if len(xs) == 1 else f"{s} ({f.format(min(xs))}–{f.format(max(xs))}, n={len(xs)})"


def epochs(job):
    """[(line_time, duration)] of the job's epoch lines"""
    out = []
    for t, line in job["lines"]:
        m = re.match(r"epoch \d+/\d+: ([0-9.]+) s", line)
        if m:
            out.append((t, float(m.group(1))))
    return out


def loads(rows):
    return ", ".join(sorted({r["load_before"].split()[0] for r in rows}))


def startup(rows):
    print("### Start-up: exec to the first dataset read\n")
    keys = ["interp", "import", "scan", "model", "first_batch_e1", "step_e1",
            "first_batch_e2", "step_e2"]
    print("| exec → first dataset read (tracker) | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    print(f"| {mr([r['first_read_s'] for r in rows])} | " +
          " | ".join(mr([r["steps"][k] for r in rows]) for k in keys) + " |")
    print(f"\nLoad (1 min) before each unit: {loads(rows)}.\n")


def startupmode(rows):
    print("| started | exec → first dataset read (tracker) | import torch, torchvision (s) | first batch, epoch 1 (s) | first batch, epoch 2 (s) | training step (s) |")
    print("|---|---|---|---|---|---|")
    by = defaultdict(list)
    for r in rows:
        by[r["mode"]].append(r)
    for mode in ["tracked", "untracked", "direct"]:
        rs = by.get(mode, [])
        print(f"| {mode} | {mr([r['first_read_s'] for r in rs])} | {mr([r['steps']['import'] for r in rs])} | "
              f"{mr([r['steps']['first_batch_e1'] for r in rs])} | {mr([r['steps']['first_batch_e2'] for r in rs])} | "
              f"{mr([r['steps']['step_e2'] for r in rs])} |")
    print(f"\nLoad (1 min) before each unit: {loads(rows)}.\n")


def storage(rows, dsize):
    print("### Storage-bound rate: cold epoch of the fast job at the 10 MiB/s cap\n")
    print("| jobs | epoch 1 per job (s) | dataset rate per job (MiB/s) | read from the store / dataset | aggregate read rate (MiB/s) | η = aggregate / alone |")
    print("|---|---|---|---|---|---|")
    by = defaultdict(list)
    for r in rows:
        by[r["mode"]].append(r)
    base = None
    for mode in ["alone", "shared2", "separate2", "shared3", "separate3"]:
        rs = by.get(mode)
        if not rs:
            continue
        ep, rate, amp, agg = [], [], [], []
        for r in rs:
            es = [epochs(j)[0] for j in r["jobs"]]
            ep += [d for _, d in es]
            rate += [dsize / d / MIB for _, d in es]
            start = min(t - d for t, d in es)
            end = max(t for t, _ in es)
            if not r.get("read_bytes"):
                continue	# runs before the counter was read right
            agg.append(r["read_bytes"] / (end - start) / MIB)
            nsets = 1 if mode.startswith(("alone", "shared")) else r["n"]
            amp.append(r["read_bytes"] / (dsize * nsets))
        if mode == "alone":
            base = statistics.median(agg)
        eta = [a / base for a in agg] if base else []
        print(f"| {mode} | {mr(ep)} | {mr(rate)} | {mr(amp, '{:.3f}')} | {mr(agg)} | {mr(eta)} |")
    for r in by.get("separate2w", []):
        es = [epochs(j)[0][1] for j in r["jobs"]]
        print(f"\nOne job with 1 worker, one with 4, separate data: epoch 1 {es[0]:.2f} s and "
              f"{es[1]:.2f} s, {dsize / es[0] / MIB:.2f} and {dsize / es[1] / MIB:.2f} MiB/s "
              f"(load {r['load_before'].split()[0]}).")
    print(f"\nLoad (1 min) before each unit: {loads(rows)}.\n")


def share(rows, imp_cpu):
    print("### CPU sharing: warm epoch 2 alone and with an identical second job\n")
    print("| model | workers | epoch 2 alone (s) | CPU alone (cores, training) | epoch 2 together (s) | rate together / alone | predicted by max-min CPU sharing |")
    print("|---|---|---|---|---|---|---|")
    by = defaultdict(list)
    for r in rows:
        by[(r["arch"], r["workers"])].append(r)
    for (arch, w), rs in sorted(by.items()):
        alone, tog, cores, ratio, pred = [], [], [], [], []
        for r in rs:
            a = r["alone"]["jobs"][0]
            ea = epochs(a)
            train_s = sum(d for _, d in ea)
            c = (a["utime"] + a["stime"] - imp_cpu) / train_s
            e2a = ea[1][1]
            e2t = [epochs(j)[1][1] for j in r["together"]["jobs"]]
            alone.append(e2a)
            tog += e2t
            cores.append(c)
            ratio.append(e2a / statistics.mean(e2t))
            pred.append(1 / max(1.0, c))  # 2 jobs x c cores on 2 CPUs
        print(f"| {arch} | {w} | {mr(alone)} | {mr(cores)} | {mr(tog)} | {mr(ratio)} | {mr(pred)} |")
    print(f"\nCPU of start-up subtracted: {imp_cpu:.2f} s (`python3 -c 'import torch, torchvision'`). "
          f"Load (1 min) before each unit: {loads(rows)}.\n")


def decode(rows):
    print("### CPU cost per image and per byte (warm files, one process)\n")
    print("| image px | KiB per image | loader CPU per image (ms) | loader CPU per MiB (s) | FAST train CPU per image (ms) | SLOW train CPU per image (ms) |")
    print("|---|---|---|---|---|---|")
    by = defaultdict(list)
    for r in rows:
        by[r["px"]].append(r)
    for px, rs in sorted(by.items()):
        f = [r for r in rs if r["job"] == "FAST"]
        s = [r for r in rs if r["job"] == "SLOW"]
        print(f"| {px} | {rs[0]['bytes_per_image'] / 1024:.1f} | "
              f"{mr([r['loader_cpu_per_image'] * 1e3 for r in rs])} | "
              f"{mr([r['loader_cpu_per_mib'] for r in rs], '{:.3f}')} | "
              f"{mr([r['train_cpu_per_image'] * 1e3 for r in f])} | "
              f"{mr([r['train_cpu_per_image'] * 1e3 for r in s])} |")
    print(f"\nLoad (1 min) before each unit: {loads(rows)}.\n")


def runs(rows, cal):
    print("### `tandemctl calibrate` + `tandemctl run` as they are: slow + fast job, cold\n")
    if cal:
        c = cal[-1]
        print(f"Calibration ({c['calibration_seconds']:.1f} s): B = "
              + ", ".join(f"{b / MIB:.2f}" for b in c["bw"]) + " MiB/s; rates "
              + ", ".join(f"{x / MIB:.2f}" for x in c["rates"]) + " MiB/s.\n")
    print("| stagger (s) | predicted M (s) | measured M (s), each run | min | error of min | A end / B end (s, 1st run) | misses A / B | own hits A / B | shared hits A / B |")
    print("|---|---|---|---|---|---|---|---|---|")
    by = defaultdict(list)
    for r in rows:
        by[r["stagger"]].append(r)
    errs = []
    for st in sorted(by, key=lambda x: (x == "auto", float(x) if x != "auto" else 0)):
        rs = by[st]
        p = rs[0]["predicted"]
        ms = [r["measured"] for r in rs]
        e = (p - min(ms)) / min(ms)
        if st != "auto":
            errs.append(abs(e))
        i = rs[0]["inst"]
        label = st if st != "auto" else f"auto ({i[1]['requested_s'] - i[0]['requested_s']:.2f})"
        print(f"| {label} | {p:.2f} | {', '.join(f'{m:.2f}' for m in ms)} | {min(ms):.2f} | {e * 100:+.1f}% | "
              f"{i[0]['end_s']:.2f} / {i[1]['end_s']:.2f} | {i[0]['misses']} / {i[1]['misses']} | "
              f"{i[0]['own_hits']} / {i[1]['own_hits']} | {i[0]['shared_hits']} / {i[1]['shared_hits']} |")
    print(f"\nMAPE over the grid (against the minimum of each point): {statistics.mean(errs) * 100:.1f}%. "
          f"Load (1 min) before each run: {loads(rows)}.\n")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "build/bench/realjobs/results.jsonl"
    rows = defaultdict(list)
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            rows[r["unit"]].append(r)
    dsize = float(sys.argv[2]) if len(sys.argv) > 2 else 96700359.0
    imp = [r["cpu_s"] for r in rows.get("importcpu", [])]
    if rows.get("startup"):
        startup(rows["startup"])
    if rows.get("startupmode"):
        startupmode(rows["startupmode"])
    if rows.get("storage"):
        storage(rows["storage"], dsize)
    if rows.get("share"):
        share(rows["share"], statistics.median(imp) if imp else 0.0)
    if rows.get("decode"):
        decode(rows["decode"])
    if rows.get("run"):
        runs(rows["run"], rows.get("calibrate"))


if __name__ == "__main__":
    main()
