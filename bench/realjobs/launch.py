#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Start commands at given offsets and record what happens to each, as JSON.

  launch.py [--delays D1,D2,...] [--cgroup DIR] [--dev MAJ:MIN] -- CMD_A ::: CMD_B ...

Per command: start, end (monotonic seconds from the first start), every line
it printed with the time it was read, exit status, and its resource usage
from wait4() (user and system CPU seconds of the process and of the children
it reaped: the DataLoader's workers). With --cgroup and --dev: the bytes the
cgroup read from that device (blkio.throttle.io_service_bytes, the kernel's
count) over the run. /proc/loadavg before and after. A bench helper, not
part of Tandem: the commands it runs are unchanged.
"""
import argparse
import json
import os
import selectors
import subprocess
import sys
import time


def cg_read_bytes(cg, dev):
    if not cg:
        return None
    with open(os.path.join(cg, "blkio.throttle.io_service_bytes")) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[0] == dev.strip() and p[1] == "Read":
                return int(p[2])
    return 0


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("usage: launch.py [options] -- CMD ::: CMD ...")
    i = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--delays", default="")
    ap.add_argument("--cgroup")
    ap.add_argument("--dev")
    args = ap.parse_args(argv[:i])
    cmds, cur = [], []
    for a in argv[i + 1:]:
        if a == ":::":
            cmds.append(cur)
            cur = []
        else:
            cur.append(a)
    cmds.append(cur)
    delays = [float(x) for x in args.delays.split(",")] if args.delays else []
    delays += [0.0] * (len(cmds) - len(delays))
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[:3]
    rb0 = cg_read_bytes(args.cgroup, args.dev)
    sel = selectors.DefaultSelector()
    jobs = [{"cmd": c, "delay": d, "lines": []} for c, d in zip(cmds, delays)]
    order = sorted(range(len(jobs)), key=lambda k: jobs[k]["delay"])
    t0 = time.monotonic()
    pending, running = list(order), {}
    while pending or running:
        now = time.monotonic() - t0
        while pending and jobs[pending[0]]["delay"] <= now:
            k = pending.pop(0)
            j = jobs[k]
            j["start"] = time.monotonic() - t0
            p = subprocess.Popen(j["cmd"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            running[p.pid] = (k, p)
            sel.register(p.stdout, selectors.EVENT_READ, (k, p))
        timeout = 0.5
        if pending:
            timeout = max(0.0, min(timeout, jobs[pending[0]]["delay"] - now))
        for key, _ in sel.select(timeout):
            k, p = key.data
            line = p.stdout.readline()
            if line:
                jobs[k]["lines"].append([round(time.monotonic() - t0, 4),
                                         line.decode(errors="replace").rstrip("\n")])
                continue
            sel.unregister(p.stdout)
            _, status, ru = os.wait4(p.pid, 0)
            j = jobs[k]
            j["end"] = time.monotonic() - t0
            j["status"] = os.waitstatus_to_exitcode(status)
            j["utime"], j["stime"] = ru.ru_utime, ru.ru_stime
            j["maxrss_kib"] = ru.ru_maxrss
            del running[p.pid]
    rb1 = cg_read_bytes(args.cgroup, args.dev)
    with open("/proc/loadavg") as f:
        load1 = f.read().split()[:3]
    out = {"jobs": jobs, "makespan": max(j["end"] for j in jobs),
           "load_before": load0, "load_after": load1,
           "read_bytes": None if rb0 is None else rb1 - rb0}
    json.dump(out, sys.stdout)
    print()
    return 0 if all(j["status"] == 0 for j in jobs) else 1


if __name__ == "__main__":
    sys.exit(main())
