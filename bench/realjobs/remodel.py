#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The model against runs already measured: for one scenario of
scenarios.sh's records, predict the makespan at each stagger of the grid with
`tandemctl model --profile PROFILE` (staggers S: instance k released at k x S,
as the runs were) and print each stagger's measured median and range, the
prediction and the error, and MAPE over the runs and over the medians. The
runs do not depend on the model (except --stagger auto's, left out here), so
one set of runs scores several model inputs: another profile, or keys
overridden with --instance.

  remodel.py RECORDS.jsonl SCENARIO PROFILE [--tandemctl PATH] [--label L]
             [-- MODEL_ARGS...]
"""
import json
import statistics as st
import subprocess
import sys


def main(argv):
    args, model_args = argv, []
    if "--" in argv:
        i = argv.index("--")
        args, model_args = argv[:i], argv[i + 1:]
    tandemctl, label = "build/tandemctl", ""
    pos = []
    it = iter(args)
    for a in it:
        if a == "--tandemctl":
            tandemctl = next(it)
        elif a == "--label":
            label = next(it)
        else:
            pos.append(a)
    if len(pos) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    records, scenario, profile = pos
    runs = {}
    for line in open(records):
        r = json.loads(line)
        if r["scenario"] != scenario or r["stagger"] == "auto":
            continue
        runs.setdefault(float(r["stagger"]), []).append(r["measured"])
    if not runs:
        print(f"remodel.py: no runs of {scenario} in {records}", file=sys.stderr)
        return 1
    hi = max(runs)
    out = subprocess.run([tandemctl, "-j", "model", "--profile", profile, "--steer", "off",
                          "--no-search", "--grid", f"0:{hi:g}:1"] + model_args,
                         check=True, capture_output=True, text=True).stdout
    pred = {g["stagger_s"]: g["makespan_s"] for g in json.loads(out)["grid"]}
    errs, merrs = [], []
    print(f"{scenario} {label}: profile {profile} {' '.join(model_args)}")
    print("| stagger | runs | measured M (s), median [range] | predicted M (s) | error of the median |")
    print("|---|---|---|---|---|")
    for s in sorted(runs):
        p = pred[s]
        m = st.median(runs[s])
        errs += [abs(x / p - 1) for x in runs[s]]
        merrs.append(abs(m / p - 1))
        print(f"| {s:g} | {len(runs[s])} | {m:.2f} [{min(runs[s]):.2f}-{max(runs[s]):.2f}] | "
              f"{p:.2f} | {m / p - 1:+.1%} |")
    print(f"MAPE: {st.mean(errs):.1%} over the {len(errs)} runs, {st.mean(merrs):.1%} on the medians")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
