#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise bench/scratch/vm-checkpoint.sh's lines (R, C, L) from a tap.log:
per case, the job's total time (median, range) and its ratio to the same
repetition's no-checkpoint job (the total less the time loadgen spent timing
its comparison copies, measure_s); the per-checkpoint stall (median, max over
every checkpoint of every repetition), the in-memory copy time measured at the
same checkpoints (into a buffer touched before; into new memory, its page
faults included) and the stall's ratio to each; the time from the job's end until every
checkpoint was durable; for drained cases the lag (durable - written) per file.
Goals (issue 36): stall <= 1.2 x in-memory copy, total within 5 % of none.

  summary.py TAP.LOG
"""
import re
import statistics
import sys


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


def main():
    rows, ckpts, lags = [], [], []
    for line in open(sys.argv[1], errors="replace"):
        line = line.strip()
        if re.match(r"^R case=", line):
            rows.append(fields(line))
        elif re.match(r"^C case=", line):
            ckpts.append(fields(line))
        elif re.match(r"^L case=", line):
            lags.append(fields(line))
    if not rows:
        print("no results")
        return 1
    none = {r["rep"]: float(r["total_s"]) for r in rows if r["case"] == "none"}
    med = statistics.median
    print(f"{'case':5} {'reps':>4} {'total s (med, range)':>24} {'vs none':>16} "
          f"{'stall med':>10} {'max':>8} {'copy med':>9} {'new med':>8} {'stall/copy':>10} {'stall/new':>9} "
          f"{'durable after s':>16} {'lag med/max s':>14}")
    for case in ("none", "disk", "dram", "dramhuge", "cxl", "cxl4k", "scratch0", "scratch0s", "plain",
                 "plainhuge"):
        rs = [r for r in rows if r["case"] == case]
        if not rs:
            continue
        tot = [float(r["total_s"]) for r in rs]
        # the copies loadgen times for comparison run inside the step: not
        # a checkpoint's cost, so taken out of the total (measure_s)
        ratios = [(float(r["total_s"]) - float(r.get("measure_s", 0))) / none[r["rep"]]
                  for r in rs if r["rep"] in none]
        cs = [c for c in ckpts if c["case"] == case]
        st = [float(c["stall_s"]) for c in cs]
        cp = [float(c["copy_s"]) for c in cs]
        cn = [float(c.get("copy_new_s", "nan")) for c in cs]
        after = [float(r["after_s"]) for r in rs]
        lg = [float(x["lag_s"]) for x in lags if x["case"] == case]
        line = (f"{case:5} {len(rs):4} {med(tot):8.3f} ({min(tot):.3f}-{max(tot):.3f}) "
                f"{(med(ratios) - 1) * 100:+6.1f}% ({(min(ratios) - 1) * 100:+.1f}..{(max(ratios) - 1) * 100:+.1f})"
                if ratios else f"{case:5} {len(rs):4} {med(tot):8.3f}")
        if st:
            ratio = [s / c for s, c in zip(st, cp) if c > 0]
            rnew = [s / c for s, c in zip(st, cn) if c > 0]
            line += (f" {med(st):10.4f} {max(st):8.4f} {med(cp):9.4f} "
                     f"{med(cn) if rnew else float('nan'):8.4f} "
                     f"{med(ratio):6.2f}x (max {max(ratio):.2f}x)"
                     f" {med(rnew) if rnew else float('nan'):6.2f}x"
                     f" {med(after):8.2f} ({min(after):.2f}-{max(after):.2f})")
            if lg:
                line += f" {med(lg):6.2f}/{max(lg):.2f}"
            drained = sum(int(r.get("drained", 0)) for r in rs)
            n = sum(int(r["n"]) for r in rs)
            line += f"  [{n} checkpoints, {drained} at the destination]"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
