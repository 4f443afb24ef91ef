#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""One bench/slurm unit as one JSON document (stdout).

collect.py RUN_DIR JOBCOMP_FILE
  RUN_DIR/out/*.out   each job's output: "start T", train.py's lines, "end T"
  JOBCOMP_FILE        Slurm's jobcomp/filetxt records (what the scheduler saw)
  RUN_DIR/agent.log   the agent's decisions and makespan lines, when it ran
"""
import datetime
import glob
import json
import os
import re
import sys


def kv(line):
    return dict(f.split("=", 1) for f in line.split() if "=" in f)


def jobs_out(run):
    jobs = {}
    for p in sorted(glob.glob(os.path.join(run, "out", "*.out"))):
        name = os.path.basename(p)[:-4]
        j = {"name": name}
        for line in open(p, errors="replace"):
            w = line.split()
            if len(w) == 2 and w[0] in ("start", "end"):
                j[w[0]] = float(w[1])
            m = re.match(r"epoch (\d+)/\d+: ([\d.]+) s", line)
            if m:
                j.setdefault("epochs_s", []).append(float(m.group(2)))
            m = re.match(r"total ([\d.]+) s", line)
            if m:
                j["train_s"] = float(m.group(1))
        jobs[name] = j
    return jobs


def jobcomp(path):
    recs = []
    for line in open(path) if os.path.exists(path) else []:
        r = kv(line)
        if "JobId" not in r:
            continue
        t = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timestamp()
        recs.append({"job": int(r["JobId"]), "state": r.get("JobState"),
                     "array_task": r.get("ArrayTaskId"),
                     "start": t(r["StartTime"]), "end": t(r["EndTime"])})
    return recs


def agent(run):
    p = os.path.join(run, "agent.log")
    if not os.path.exists(p):
        return None
    a = {"decisions": [], "releases": [], "makespan": []}
    for line in open(p):
        f = kv(line)
        ev = f.get("ev")
        if ev == "decide":
            a["decisions"].append({k: f[k] for k in ("ts", "job", "mode", "running", "planned", "read",
                                                       "release_in_ms", "pred_ms", "pred_now_ms", "gain")
                                   if k in f})
        elif ev == "release":
            a["releases"].append({"ts": float(f["ts"]), "job": int(f["job"]), "reason": f["reason"],
                                  "held_ms": int(f["held_ms"])})
        elif ev == "makespan":
            a["makespan"].append({k: f[k] for k in ("n", "measured_ms", "predicted_ms", "error")
                                  if k in f})
        elif ev in ("profile", "dataset", "model_error"):
            a.setdefault(ev, []).append(line.split(" ", 2)[2].strip())
    return a


def main():
    run, jc = sys.argv[1], sys.argv[2]
    jobs = jobs_out(run)
    comp = jobcomp(jc)
    starts = [j["start"] for j in jobs.values() if "start" in j]
    ends = [j["end"] for j in jobs.values() if "end" in j]
    doc = {"jobs": list(jobs.values()), "jobcomp": comp,
           "makespan_s": max(ends) - min(starts) if starts and ends else None,
           "all_done": len(ends) == len(jobs) and all(r["state"] == "COMPLETED" for r in comp)}
    if comp:
        doc["jobcomp_span_s"] = max(r["end"] for r in comp) - min(r["start"] for r in comp)
    a = agent(run)
    if a is not None:
        doc["agent"] = a
        if a["makespan"]:
            doc["agent_measured_s"] = int(a["makespan"][-1]["measured_ms"]) / 1000
            if "predicted_ms" in a["makespan"][-1]:
                doc["agent_predicted_s"] = int(a["makespan"][-1]["predicted_ms"]) / 1000
    json.dump(doc, sys.stdout)
    print()


if __name__ == "__main__":
    main()
