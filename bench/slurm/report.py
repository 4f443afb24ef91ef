#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise bench/slurm/measure.sh's results.jsonl: one row per unit kind.

report.py [RESULTS] [--md]
  makespan   first job's "start" line to the last job's "end" line (the jobs' clocks)
  jobcomp    Slurm's span: first StartTime to last EndTime (one-second resolution)
  predicted  the agent's predicted makespan for the group (ev=makespan), with the plugin
  measured   the agent's measured makespan (first release to last exit), with the plugin
  pred err   predicted / agent measured - 1
  held       per job, how long the agent held it (ms), per repeat
  agent CPU  the agent's user + system CPU time over the unit
Medians and [min, max] over the repeats; the ratio is the median against the
unit's baseline (array-none, online-F-none) of the same file.
"""
import json
import statistics
import sys


def med_range(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None, None
    return statistics.median(xs), min(xs), max(xs)


def fmt(xs, unit="s"):
    m, lo, hi = med_range(xs)
    if m is None:
        return "-"
    return f"{m:.1f} [{lo:.1f}, {hi:.1f}]"


def pct(xs):
    m, lo, hi = med_range(xs)
    if m is None:
        return "-"
    return f"{100 * m:+.0f}% [{100 * lo:+.0f}, {100 * hi:+.0f}]"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    md = "--md" in sys.argv
    path = args[0] if args else "build/bench/slurm/results.jsonl"
    rows = [json.loads(line) for line in open(path) if line.strip()]
    units = {}
    for r in rows:
        units.setdefault(r["unit"], []).append(r)
    cols = ["unit", "n", "makespan s", "vs none", "jobcomp s", "predicted s", "agent measured s",
            "pred err", "held ms (per job)", "agent CPU s", "all done", "load before"]
    out = []
    for u in sorted(units):
        rs = units[u]
        if u.startswith("calibrate"):
            continue
        base = None
        if u.startswith(("array-", "online-", "three-")):
            b = u.rsplit("-", 1)[0] + "-none"
            if b in units and b != u:
                base = med_range([r.get("makespan_s") for r in units[b]])[0]
        m = med_range([r.get("makespan_s") for r in rs])[0]
        held = []
        for r in rs:
            a = r.get("agent") or {}
            held.append("/".join(str(x["held_ms"]) for x in sorted(a.get("releases", []),
                                                                       key=lambda x: x["ts"])))
        out.append([u, str(len(rs)), fmt([r.get("makespan_s") for r in rs]),
                    f"{m / base:.2f}" if base and m else "-",
                    fmt([r.get("jobcomp_span_s") for r in rs]),
                    fmt([r.get("agent_predicted_s") for r in rs]),
                    fmt([r.get("agent_measured_s") for r in rs]),
                    pct([r["agent_predicted_s"] / r["agent_measured_s"] - 1 for r in rs
                         if r.get("agent_predicted_s") and r.get("agent_measured_s")]),
                    "; ".join(h for h in held if h) or "-",
                    fmt([r.get("agent_cpu_s") for r in rs]),
                    "yes" if all(r.get("all_done") for r in rs) else "NO",
                    ", ".join(r.get("load_before", "?").split()[0] for r in rs)])
    if md:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for o in out:
            print("| " + " | ".join(o) + " |")
    else:
        w = [max(len(c), *(len(o[i]) for o in out)) for i, c in enumerate(cols)]
        print("  ".join(c.ljust(w[i]) for i, c in enumerate(cols)))
        for o in out:
            print("  ".join(x.ljust(w[i]) for i, x in enumerate(o)))


if __name__ == "__main__":
    main()
