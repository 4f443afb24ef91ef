#!/usr/bin/python3
# Pass-to-pass difference and default/steady ratio of run.sh's four passes:
#   compare.py DIR   (DIR/A1/runs.csv .. DIR/S2/runs.csv as run.sh writes them, or
#                     DIR/A1.csv .. DIR/S2.csv as committed in r224/, r32/, r32b/)
import os
import csv, statistics, sys
base=sys.argv[1]
def load(d):
    p="%s/%s/runs.csv"%(base,d)
    if not os.path.exists(p):
        p="%s/%s.csv"%(base,d)
    rows=list(csv.DictReader(l for l in open(p) if not l.startswith("#")))
    return {(r["arch"],r["batch"]): r for r in rows}
D={k:load(k) for k in ("A1","A2","S1","S2")}
keys=sorted(D["A1"], key=lambda k:(k[0],int(k[1])))
print("%-22s %5s %8s %8s %8s %8s"%("arch","batch","A1","A2","S1","S2"))
dA,dS,ratio=[],[],[]
for k in keys:
    v={n:float(D[n][k]["time_median_s"]) for n in D}
    print("%-22s %5s %8.4f %8.4f %8.4f %8.4f"%(k[0],k[1],v["A1"],v["A2"],v["S1"],v["S2"]))
    dA.append(abs(v["A1"]-v["A2"])/min(v["A1"],v["A2"])); dS.append(abs(v["S1"]-v["S2"])/min(v["S1"],v["S2"]))
    ratio.append((v["A1"]+v["A2"])/(v["S1"]+v["S2"]))
print("pass-to-pass |diff| default: mean %.1f%% median %.1f%%; steady: mean %.1f%% median %.1f%%"%(100*statistics.mean(dA),100*statistics.median(dA),100*statistics.mean(dS),100*statistics.median(dS)))
print("default/steady time ratio: median %.3f range %.3f-%.3f"%(statistics.median(ratio),min(ratio),max(ratio)))
