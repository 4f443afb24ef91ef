#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# CPU contention among co-located real jobs, measured directly: the same
# PyTorch job (examples/pytorch/train.py) alone, two copies at once and three
# copies at once, on a dataset already in the page cache (no storage in it),
# each job's CPU time (its workers included: /usr/bin/time's rusage of the
# leader, which reaps them). Repetitions interleaved. Prints per job CPU-s and
# wall s, the ratio to the alone runs of the same repetition, and the
# contention C of the makespan model (1 + C (j - 1) = the ratio with j jobs).
#
#   OUT=build/bench/contention bash bench/realjobs/contention.sh [--reps N] [--arch A] [--batch B]
#
# Not part of make check. Run it on an idle machine (it records the load).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-/usr/bin/python3}
OUT=${OUT:-$top/build/bench/contention}
reps=3 arch=shufflenet_v2_x0_5 batch=64
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--arch) arch=$2; shift 2 ;;
	--batch) batch=$2; shift 2 ;;
	*) echo "contention.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
mkdir -p "$OUT"
ds=$OUT/ds/train
[ -d "$ds" ] || $PY "$top/examples/pytorch/gen_dataset.py" "$ds" --classes 4 --per-class 500 \
	--size 256 --noise 0.2 --seed 97 >/dev/null || { echo "contention.sh: dataset failed" >&2; exit 1; }
cat "$ds"/*/* >/dev/null	# into the page cache: the runs read no storage
job() { # $1: seed; one line "wall user sys" in $OUT/t.$1
	/usr/bin/time -f "%e %U %S" -o "$OUT/t.$1" $PY "$top/examples/pytorch/train.py" "$ds" \
		--arch "$arch" --size 32 --batch-size "$batch" --workers 2 --epochs 2 --seed "$1" >/dev/null 2>&1
}
res=$OUT/results.tsv
echo -e "rep\tjobs\tjob\twall_s\tcpu_s\tload" >"$res"
for r in $(seq "$reps"); do
	for j in 1 2 3; do
		load=$(cut -d' ' -f1 /proc/loadavg)
		for k in $(seq "$j"); do job "$k" & done
		wait
		for k in $(seq "$j"); do
			read -r w u s <"$OUT/t.$k"
			echo -e "$r\t$j\t$k\t$w\t$(echo "$u + $s" | bc)\t$load" >>"$res"
		done
	done
done
"$PY" - "$res" <<'EOF'
import statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
by = {}
for r, j, k, w, c, load in rows:
    by.setdefault((int(r), int(j)), []).append((float(w), float(c)))
print("| jobs at once | CPU-s per job, median [range] | wall s per job | CPU ratio to alone, median [range] | C = (ratio - 1) / (jobs - 1) |")
print("|---|---|---|---|---|")
reps = sorted({r for r, _ in by})
for j in (1, 2, 3):
    cpu = [c for r in reps for _, c in by[(r, j)]]
    wall = [w for r in reps for w, _ in by[(r, j)]]
    ratio = [c / st.mean(cc for _, cc in by[(r, 1)]) for r in reps for _, c in by[(r, j)]]
    cs = [(x - 1) / (j - 1) for x in ratio] if j > 1 else []
    fmt = lambda v: f"{st.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]"
    print(f"| {j} | {fmt(cpu)} | {fmt(wall)} | {fmt(ratio)} | {fmt(cs) if cs else '-'} |")
EOF
