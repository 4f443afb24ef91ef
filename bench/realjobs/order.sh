#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The learned read order (`tandemctl run --learn-order`, Documentation/model.md)
# on real jobs, and what recording it costs.
#
# (a) Does a real PyTorch job's order repeat? Two unchanged training jobs
#     (examples/pytorch/train.py: ImageFolder, DataLoader with WORKERS workers
#     and its seeded generator, seeds 1 and 2) run REPS times under `tandemctl
#     run --learn-order F`; each run's order is compared with the previous
#     run's (displacement, coverage, stable). Then once with seeds 3 and 4:
#     an order that must not be taken for the same.
# (b) The recorder's cost where it is highest: open-heavy jobs (two loadgen
#     jobs over many small cached files, no compute), with and without
#     recording, REPS times interleaved, 1 epoch and 3 epochs (recording
#     stops once every job opened every file); median wall time of each and
#     the ratio.
#
#   OUT=build/bench/order bash bench/realjobs/order.sh [--reps N] [--workers W]
#
# Not part of make check. Needs root (fanotify). Run it on an idle machine:
# it records the load before each part.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-/usr/bin/python3}
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
OUT=${OUT:-$top/build/bench/order}
reps=3 workers=2
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--workers) workers=$2; shift 2 ;;
	*) echo "order.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
mkdir -p "$OUT"
ds=$OUT/ds/train
[ -d "$ds" ] || $PY "$top/examples/pytorch/gen_dataset.py" "$ds" --classes 4 --per-class 250 \
	--size 96 --noise 0.2 --seed 97 >/dev/null || { echo "order.sh: dataset failed" >&2; exit 1; }
echo "# $(date -u +%FT%TZ) commit $(git -C "$top" rev-parse --short HEAD): $0 $*; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# (a) real jobs: $(find "$ds" -type f | wc -l) JPEGs, train.py shufflenet_v2_x0_5 at 32 px, batch 32, $workers workers, 1 epoch"
job() { echo "$PY $top/examples/pytorch/train.py $ds --arch shufflenet_v2_x0_5 --size 32 --batch-size 32 --workers $workers --epochs 1 --seed $1"; }
rm -f "$OUT/learned"
printf '%-8s %-6s %-12s %-10s %-8s %-8s\n' run seeds files displacement coverage stable
for k in $(seq 1 $((reps + 1))); do
	a=1 b=2
	[ "$k" -gt "$reps" ] && a=3 b=4
	# shellcheck disable=SC2046
	"$T" run --dataset "$ds" --no-track --learn-order "$OUT/learned" --report "$OUT/a$k.json" -- \
		$(job $a) ::: $(job $b) >"$OUT/a$k.out" 2>&1 || { echo "order.sh: run $k failed" >&2; tail "$OUT/a$k.out" >&2; exit 1; }
	jq -r --arg k "$k" --arg s "$a,$b" '.read_order | [$k, $s, .files_recorded, (.displacement // "-"), (.coverage // "-"), .stable] |
		"\(.[0])        \(.[1])    \(.[2])         \(.[3])    \(.[4])    \(.[5])"' "$OUT/a$k.json"
done

echo "# (b) recorder cost: 2 loadgen jobs over 20000 cached 4 KiB files, no compute; load $(cut -d' ' -f1-3 /proc/loadavg)"
small=$OUT/small
[ -d "$small" ] || "$T" loadgen gen "$small" --files 20000 --size 4K >/dev/null
cat "$small"/* >/dev/null
for ep in 1 3; do
	lg="$T loadgen $small --compute 0 --epochs $ep --seed"
	: >"$OUT/b$ep.tsv"
	for k in $(seq 1 "$reps"); do
		for mode in off on; do
			opt=--no-learn-order
			[ $mode = on ] && opt="--learn-order $OUT/small.learned"
			# shellcheck disable=SC2086
			"$T" run --dataset "$small" --no-track $opt --report "$OUT/b$ep-$mode$k.json" -- $lg 1 ::: $lg 2 >/dev/null 2>&1 ||
				{ echo "order.sh: (b) run failed" >&2; exit 1; }
			printf '%s\t%s\t%s\n' $mode "$k" "$(jq .measured_makespan_s "$OUT/b$ep-$mode$k.json")" >>"$OUT/b$ep.tsv"
		done
	done
	printf '%d epoch(s): ' $ep
	awk '{ w[$1] = w[$1] " " $3 }
		function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			lo = a[1]; hi = a[n]; return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		END { mo = med(w["off"]); lo0 = lo; hi0 = hi; mn = med(w["on"])
			printf "without recording %.3f s [%.3f-%.3f], recording %.3f s [%.3f-%.3f], ratio %.3f; ", mo, lo0, hi0, mn, lo, hi, mn / mo }' "$OUT/b$ep.tsv"
	jq -c '.read_order | {files_recorded, opens, stopped_early}' "$OUT/b$ep-on$reps.json"
done
