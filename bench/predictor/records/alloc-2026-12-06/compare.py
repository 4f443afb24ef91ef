#!/usr/bin/python3
# Pass-to-pass difference and default/steady ratio of run.sh's four passes:
#   compare.py DIR   (DIR/A1/runs.csv .. DIR/S2/runs.csv as run.sh writes them, or
#                     DIR/A1.csv .. DIR/S2.csv as committed in r224/, r32/, r32b/)
import csv
import os
import statistics
import sys

PASSES = ("A1", "A2", "S1", "S2")  # A: default allocator, S: held steady


def load(base, name):
    p = os.path.join(base, name, "runs.csv")
    if not os.path.exists(p):
        p = os.path.join(base, name + ".csv")
    with open(p) as f:
        rows = csv.DictReader(ln for ln in f if not ln.startswith("#"))
        return {(r["arch"], r["batch"]): float(r["time_median_s"]) for r in rows}


def diff(a, b):
    return abs(a - b) / min(a, b)


def pct(xs):
    return "mean %.1f%% median %.1f%%" % (100 * statistics.mean(xs), 100 * statistics.median(xs))


def main():
    t = {n: load(sys.argv[1], n) for n in PASSES}
    print("%-22s %5s %8s %8s %8s %8s" % (("arch", "batch") + PASSES))
    d_a, d_s, ratio = [], [], []
    for k in sorted(t["A1"], key=lambda k: (k[0], int(k[1]))):
        v = {n: t[n][k] for n in PASSES}
        print("%-22s %5s %8.4f %8.4f %8.4f %8.4f" % (k + tuple(v[n] for n in PASSES)))
        d_a.append(diff(v["A1"], v["A2"]))
        d_s.append(diff(v["S1"], v["S2"]))
        ratio.append((v["A1"] + v["A2"]) / (v["S1"] + v["S2"]))
    print("pass-to-pass |diff| default: %s; steady: %s" % (pct(d_a), pct(d_s)))
    print("default/steady time ratio: median %.3f range %.3f-%.3f" % (
        statistics.median(ratio), min(ratio), max(ratio)))


if __name__ == "__main__":
    main()
