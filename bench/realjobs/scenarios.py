#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tables (markdown) from bench/realjobs/scenarios.sh's scenarios.jsonl: per
scenario and stagger the measured makespan (median and range over the
repetitions) against the prediction; per scenario the MAPE, the oracle (the
grid's best median), --stagger auto against it and against simultaneous start,
and each job's sharing counts.

  scenarios.py [build/bench/realjobs/scenarios.jsonl]
"""
import json
import statistics
import sys
from collections import defaultdict

MIB = 1048576.0
PAGE = 4096.0


def mr(xs, f="{:.2f}"):
    s = f.format(statistics.median(xs))
    return s if len(xs) == 1 else f"{s} [{f.format(min(xs))}–{f.format(max(xs))}]"


def pct(x):
    return f"{x * 100:+.1f}%"


def offsets(r):
    t0 = r["inst"][0]["start_s"]
    return ", ".join(f"{i['start_s'] - t0:.1f}" for i in r["inst"][1:])


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "build/bench/realjobs/scenarios.jsonl"
    rows = [json.loads(line) for line in open(path) if line.strip()]
    by = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by[r["scenario"]][r["stagger"]].append(r)
    summary = []
    for s, pts in by.items():
        print(f"### {s}\n")
        loads = sorted({r["load_before"].split()[0] for st in pts.values() for r in st})
        vms = max(r.get("qemu", 0) for st in pts.values() for r in st)
        probes = sorted(r["probe_s"] for st in pts.values() for r in st if "probe_s" in r)
        probe = (f"; the speed probe (jobs.sh, a fixed shell loop) took {probes[0]:.2f}-"
                 f"{probes[-1]:.2f} s, median {probes[len(probes) // 2]:.2f} s") if probes else ""
        print(f"Load average (1 min) before the runs: {loads[0]}–{loads[-1]}; qemu processes: {vms}{probe}.\n")
        print("| stagger | released at (s) | runs | measured M (s), median [range] | predicted M (s) | error of the median | errors of the runs |")
        print("|---|---|---|---|---|---|---|")
        errs, med_errs = [], []
        grid = {}
        for st in sorted(pts, key=lambda x: (x == "auto", float(x) if x != "auto" else 0)):
            rs = pts[st]
            meas = [r["measured"] for r in rs]
            pred = statistics.median(r["predicted"] for r in rs)
            e = [r["measured"] / r["predicted"] - 1 for r in rs]
            errs += [abs(x) for x in e]
            me = statistics.median(meas) / pred - 1
            med_errs.append(abs(me))
            if st != "auto":
                grid[st] = statistics.median(meas)
            rel = "; ".join(sorted({offsets(r) for r in rs}))
            print(f"| {st} | {rel} | {len(rs)} | {mr(meas)} | {pred:.2f} | {pct(me)} | "
                  + ", ".join(pct(x) for x in e) + " |")
        oracle = min(grid, key=grid.get)
        auto = pts.get("auto", [])
        am = statistics.median(r["measured"] for r in auto) if auto else None
        z = grid.get("0")
        print()
        print(f"MAPE: {statistics.mean(errs) * 100:.1f}% over the {len(errs)} runs, "
              f"{statistics.mean(med_errs) * 100:.1f}% on the medians.")
        print(f"Oracle (best median on the grid): stagger {oracle} s, {grid[oracle]:.2f} s.")
        if am is not None:
            print(f"--stagger auto: released at {'; '.join(sorted({offsets(r) for r in auto}))} s, "
                  f"median {am:.2f} s: {pct(am / grid[oracle] - 1)} against the oracle"
                  + (f", {pct(am / z - 1)} against simultaneous start ({z:.2f} s)." if z else "."))
        print()
        print("Sharing counts (MiB, medians): misses / own hits / shared hits per job")
        print()
        for st in ("0", "auto"):
            if st not in pts:
                continue
            n = len(pts[st][0]["inst"])
            cells = []
            for k in range(n):
                m = [statistics.median(r["inst"][k][f] for r in pts[st]) * PAGE / MIB
                     for f in ("misses", "own_hits", "shared_hits")]
                cells.append(f"job {k}: {m[0]:.1f} / {m[1]:.1f} / {m[2]:.1f}")
            print(f"- stagger {st}: " + "; ".join(cells))
        print()
        summary.append((s, statistics.mean(errs), statistics.mean(med_errs),
                        (am / grid[oracle] - 1) if am else None, (am / z - 1) if am and z else None))
    print("### Summary\n")
    print("| scenario | MAPE (runs) | MAPE (medians) | auto vs oracle | auto vs simultaneous |")
    print("|---|---|---|---|---|")
    for s, e, me, ao, az in summary:
        print(f"| {s} | {e * 100:.1f}% | {me * 100:.1f}% | "
              f"{pct(ao) if ao is not None else '–'} | {pct(az) if az is not None else '–'} |")


if __name__ == "__main__":
    main()
