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
#   OUT=... bash bench/realjobs/contention.sh --mix "ARCH:BATCH ARCH:BATCH ..." [--reps N]
#     a mix of different jobs (validation.md's three: "mobilenet_v3_small:32
#     shufflenet_v2_x0_5:64 shufflenet_v2_x0_5:32"): each job alone, one after
#     the other, then all of them at once; each job's CPU at once against its
#     own alone in the same repetition, C = (ratio - 1) / (jobs - 1)
#
# Not part of make check. Run it on an idle machine (it records the load).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-/usr/bin/python3}
OUT=${OUT:-$top/build/bench/contention}
reps=3 arch=shufflenet_v2_x0_5 batch=64 mix=
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--arch) arch=$2; shift 2 ;;
	--batch) batch=$2; shift 2 ;;
	--mix) mix=$2; shift 2 ;;
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
if [ -n "$mix" ]; then
	mjob() { # $1: index, $2: ARCH:BATCH, $3: seed
		/usr/bin/time -f "%e %U %S" -o "$OUT/t.$1" $PY "$top/examples/pytorch/train.py" "$ds" \
			--arch "${2%%:*}" --size 32 --batch-size "${2##*:}" --workers 2 --epochs 2 --seed "$3" >/dev/null 2>&1
	}
	res=$OUT/mix.tsv
	echo -e "rep\tmode\tjob\tspec\twall_s\tcpu_s\tload" >"$res"
	for r in $(seq "$reps"); do
		for mode in alone together; do
			load=$(cut -d' ' -f1 /proc/loadavg)
			k=0
			for spec in $mix; do
				k=$((k + 1))
				if [ $mode = alone ]; then mjob $k "$spec" $k; else mjob $k "$spec" $k & fi
			done
			wait
			k=0
			for spec in $mix; do
				k=$((k + 1))
				read -r w u s <"$OUT/t.$k"
				echo -e "$r\t$mode\t$k\t$spec\t$w\t$(echo "$u + $s" | bc)\t$load" >>"$res"
			done
		done
	done
	"$PY" - "$res" <<'EOF'
import statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
cpu = {}
for r, mode, k, spec, w, c, load in rows:
    cpu[(int(r), mode, int(k))] = (spec, float(w), float(c))
reps = sorted({r for r, _, _ in cpu})
jobs = sorted({k for _, _, k in cpu})
n = len(jobs)
fmt = lambda v: f"{st.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]"
print("| job | CPU-s alone | CPU-s together | wall s alone / together | CPU ratio | C = (ratio - 1) / (jobs - 1) |")
print("|---|---|---|---|---|---|")
allc = []
for k in jobs:
    a = [cpu[(r, "alone", k)][2] for r in reps]
    t = [cpu[(r, "together", k)][2] for r in reps]
    wa = [cpu[(r, "alone", k)][1] for r in reps]
    wt = [cpu[(r, "together", k)][1] for r in reps]
    ratio = [t[i] / a[i] for i in range(len(reps))]
    c = [(x - 1) / (n - 1) for x in ratio]
    allc += c
    print(f"| {cpu[(reps[0], 'alone', k)][0]} | {fmt(a)} | {fmt(t)} | {st.median(wa):.2f} / {st.median(wt):.2f} | {fmt(ratio)} | {fmt(c)} |")
print(f"\nC over all jobs and repetitions: {fmt(allc)}")
EOF
	exit 0
fi
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
