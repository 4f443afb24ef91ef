#!/bin/bash
# Run-to-run spread of the device probe over the runN.txt files of a folder:
#   bash spread.sh DIR      (after: for i in 1 2 3 4 5; do tandemctl predict probe --rerun;
#                            cp CACHE/probe-v1.txt DIR/run$i.txt; done)
dir=${1:-$(dirname "$0")}
for k in conv dwconv gemm mem op; do
	grep -h "^$k " "$dir"/run*.txt | awk '{print $2}' | sort -g |
		awk -v k=$k '{v[NR]=$1} END {m=v[int((NR+1)/2)];
			printf "%-6s min %.4g median %.4g max %.4g (max-min)/median %.1f %%\n",
			       k, v[1], m, v[NR], 100*(v[NR]-v[1])/m}'
done
grep -h '^seconds' "$dir"/run*.txt | awk '{s+=$2; if ($2>mx) mx=$2} END {printf "wall %.2f s mean, %.2f s max over %d runs\n", s/NR, mx, NR}'
