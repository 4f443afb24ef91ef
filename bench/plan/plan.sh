#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One plan (issue 34) on real PyTorch jobs, with the learned order in
# effect: the host's throttled loop store (10 MiB/s; dataset a of
# measure.sh: 2000 JPEGs), no tandem.ko (the host cannot load it), so the
# learned order's prefetch is tandemctl's own thread (ctl/release/uprefetch.c).
# Per scenario: one calibrate, two runs at stagger 0 that learn the read
# order (--learn-order, a file per scenario), then REPS repetitions of the
# grid, interleaved (every schedule of a repetition, then the next
# repetition; scenarios one after the other within a repetition). Every
# grid run is the third run of the same jobs or later.
#
#   bash bench/plan/plan.sh [--reps N] [--scenarios "three differ2"]
#   python3 bench/plan/summary.py build/bench/plan/plan.jsonl
#   bash scripts/loopstore.sh down plan     afterwards (the image is kept)
#
# Grids: three 0 4 9 14 auto (k x S), differ2 0 3 6 9 auto. One JSON line
# per run in $OUT/plan.jsonl (default build/bench/plan), with the load before
# and after, the plan chosen and its alternatives, and the prefetch's figures.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
T=$top/${B:-build}/tandemctl
LS=$top/scripts/loopstore.sh
PY=/usr/bin/python3
OUT=${OUT:-$top/build/bench/plan}
NAME=${STORE_NAME:-plan}
MNT=${STORE_DIR:-/var/tmp/tandem-plan/mnt}
IMG=${STORE_IMAGE:-/var/tmp/tandem-plan/store.img}
export TANDEM_TRACKER_DIR=${TANDEM_TRACKER_DIR:-/sys/fs/bpf/tandem-plan}
# tandemctl run leaves the tracker loaded (pinned) for stats: unload it at exit
trap '"$T" tracker unload >/dev/null 2>&1 || true' EXIT
WARM=${WARM:-20s}
reps=3 scenarios="three differ2"
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift ;;
	--scenarios) scenarios=$2; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "plan.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$OUT" "$(dirname "$IMG")"
# shellcheck source=bench/realjobs/jobs.sh
. "$top/bench/realjobs/jobs.sh"
grid_of() { case $1 in three) echo "0 4 9 14 auto" ;; *) echo "0 3 6 9 auto" ;; esac; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

"$LS" up --size 1024 --bps 10M --dir "$MNT" --name "$NAME" --image "$IMG" >/dev/null
[ -d "$ds" ] || $PY "$top/examples/pytorch/gen_dataset.py" "$ds" --classes 4 --per-class 500 \
	--size 256 --noise 0.2 --seed 97 >/dev/null
sync -f "$MNT"
st_run() { # $1 scenario, $2 stagger, $3 rep (0: learning), $4 report
	local l0; l0=$(load)
	"$LS" drop "$NAME"
	# shellcheck disable=SC2046
	"$LS" exec "$NAME" -- "$T" run --dataset "$ds" --profile "$OUT/prof-$1.json" --stagger "$2" \
		--learn-order "$OUT/order-$1.order" --report "$4" -- $(jobs_of "$1") >"$4.out" 2>&1 ||
		{ tail -n 20 "$4.out"; exit 1; }
	jq -c --arg s "$1" --arg st "$2" --argjson rep "$3" --arg l0 "$l0" --arg l1 "$(load)" \
		'{scenario: $s, stagger: $st, rep: $rep, load_before: $l0, load_after: $l1, time: (now | todate),
		  predicted: .predicted_makespan_s, range: .predicted_range_s, measured: .measured_makespan_s, error,
		  plan: .plan, prefetch: .prefetch, in_effect: .read_order.learned_before,
		  order_used: .read_order.used, unused_why: .read_order.unused_why,
		  displacement: .read_order.displacement,
		  inst: [.instances[] | {name, requested_s, start_s, end_s, predicted_end_s, misses, own_hits, shared_hits}]}' \
		"$4" | tee -a "$OUT/plan.jsonl" |
		jq -r '"\(.scenario) \(.stagger) rep \(.rep): M \(.measured * 100 | round / 100) s, predicted \(.predicted * 100 | round / 100) s, plan \(.plan.prefetch // "-"), prefetch \(.prefetch.pages // 0) pages \(.prefetch.state // "") at \(.prefetch.finished_s // "-"), load \(.load_before)"'
}
for s in $scenarios; do
	echo "# $s: calibrate ($(load))"
	"$LS" drop "$NAME"
	# shellcheck disable=SC2046
	"$LS" exec "$NAME" -- "$T" calibrate --dataset "$ds" --sample 0 --warm-time "$WARM" --warm-runs 3 \
		-o "$OUT/prof-$s.json" $(insts_of "$s") -- $(jobs_of "$s") >"$OUT/prof-$s.out" 2>&1 ||
		{ tail -n 20 "$OUT/prof-$s.out"; exit 1; }
	rm -f "$OUT/order-$s.order"
	st_run "$s" 0 0 "$OUT/learn1-$s.json"
	st_run "$s" 0 0 "$OUT/learn2-$s.json"
done
for rep in $(seq "$reps"); do
	for s in $scenarios; do
		for st in $(grid_of "$s"); do
			st_run "$s" "$st" "$rep" "$OUT/run.json"
		done
	done
done
