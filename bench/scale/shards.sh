#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The model on a sharded dataset (issue 32, "Sharded datasets"): real
# PyTorch jobs (examples/pytorch/train.py --shards) reading WebDataset-style
# tar shards (examples/pytorch/make_shards.py) from a throttled store on the
# host (scripts/loopstore.sh) with the BPF tracker: one calibration of the
# jobs, then `tandemctl run` at a grid of staggers and --stagger auto, REPS
# times interleaved, each run on a cold store; predicted against measured
# makespan per run. The model sees the shards as the dataset's files (a few
# large ones) and each job's DataLoader workers as its read streams, which
# calibrate measures, as for an ImageFolder job.
#
#   bench/scale/shards.sh [--reps N] [--shard-size 8M] [--grid "0 4 8 auto"]
#                         [--bps 10M] [--out DIR]
#   bench/scale/shards.sh down      remove the store (kept between runs)
#
# Store: 4 classes x 500 JPEGs of 256 px (92 MiB, the real-job benches'
# dataset a) packed into shards of --shard-size, made once and reused
# (/var/tmp/tandem-shards/). Jobs (32 px, 2 epochs, 2 workers each):
# mobilenet_v3_small batch 32 and shufflenet_v2_x0_5 batch 64 (differ2 of
# bench/realjobs). Results: a JSON line per run in OUT/runs.jsonl (default
# build/bench/shards-TIME) with the load before and after, and a summary
# (MAPE, median and range of |error|) at the end.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
T=$top/${B:-build}/tandemctl
LS=$top/scripts/loopstore.sh
PY=/usr/bin/python3
EX=$top/examples/pytorch
NAME=shards
DIR=/var/tmp/tandem-shards
MNT=$DIR/mnt
export TANDEM_TRACKER_DIR=${TANDEM_TRACKER_DIR:-/sys/fs/bpf/tandem-shards}
reps=2 ssize=8M grid="0 4 8 auto" bps=10M out=$top/build/bench/shards-$(date +%Y%m%d-%H%M%S)
if [ "${1:-}" = down ]; then
	"$T" tracker unload >/dev/null 2>&1 || true
	"$LS" down "$NAME"
	rm -rf "$DIR"
	exit 0
fi
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift ;;
	--shard-size) ssize=$2; shift ;;
	--grid) grid=$2; shift ;;
	--bps) bps=$2; shift ;;
	--out) out=$2; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "shards.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$out" "$DIR"
"$LS" up --size 600 --bps "$bps" --dir "$MNT" --name "$NAME" --image "$DIR/store.img" >/dev/null
sh=$MNT/shards-$ssize
if [ ! -s "$sh/classes.txt" ]; then
	[ -d "$MNT/src" ] || $PY "$EX/gen_dataset.py" "$MNT/src" --classes 4 --per-class 500 \
		--size 256 --noise 0.2 >/dev/null
	rm -rf "$sh"
	$PY "$EX/make_shards.py" "$MNT/src" "$sh" --shard-size "$ssize"
	sync
fi
TR="$PY $EX/train.py $sh --shards --size 32 --workers 2 --epochs 2"
JOBS="$TR --arch mobilenet_v3_small --batch-size 32 --seed 1 ::: $TR --arch shufflenet_v2_x0_5 --batch-size 64 --seed 2"
INSTS="--instance name=j0,order=indep,epochs=2,seed=1 --instance name=j1,order=indep,epochs=2,seed=2"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "# $(ls "$sh"/*.tar | wc -l) shards of at most $ssize, $(du -sh "$sh" | cut -f1); store $bps/s; load $(load)"
echo "# calibrate -> $out/prof.json"
# shellcheck disable=SC2086
"$LS" drop "$NAME" && "$LS" exec "$NAME" -- "$T" calibrate --dataset "$sh" --sample 0 \
	--warm-time 30s --warm-runs 2 -o "$out/prof.json" $INSTS -- $JOBS >"$out/calibrate.out" 2>&1 ||
	{ tail -n 20 "$out/calibrate.out"; exit 1; }
for rep in $(seq "$reps"); do
	for st in $grid; do
		l0=$(load)
		# shellcheck disable=SC2086
		"$LS" drop "$NAME" && "$LS" exec "$NAME" -- "$T" run --dataset "$sh" --profile "$out/prof.json" \
			--stagger "$st" --no-register --report "$out/run.json" -- $JOBS >"$out/run.out" 2>&1 ||
			{ tail -n 20 "$out/run.out"; exit 1; }
		jq -c --arg st "$st" --argjson rep "$rep" --arg l0 "$l0" --arg l1 "$(load)" --arg ss "$ssize" \
			'{shard_size: $ss, stagger: $st, rep: $rep, load_before: $l0, load_after: $l1,
			  time: (now | todate), predicted: .predicted_makespan_s, measured: .measured_makespan_s,
			  inst: [.instances[] | {name, start_s, end_s, predicted_end_s, misses, own_hits, shared_hits}]}' \
			"$out/run.json" | tee -a "$out/runs.jsonl" |
			jq -r '"stagger \(.stagger) rep \(.rep): measured \(.measured * 100 | round / 100) s, predicted \(.predicted * 100 | round / 100) s (load \(.load_before))"'
	done
done
jq -s -r 'map((.predicted / .measured - 1) | fabs * 100) | sort as $e
	| "runs \($e | length): MAPE \(add / length * 10 | round / 10) %, |error| median \($e[length / 2 | floor] * 10 | round / 10) %, range \($e[0] * 10 | round / 10)-\($e[-1] * 10 | round / 10) %"' \
	"$out/runs.jsonl" | tee "$out/summary.txt"
