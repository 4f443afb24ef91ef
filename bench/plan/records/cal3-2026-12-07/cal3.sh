#!/usr/bin/env bash
# three calibrations of plan.sh's `three` scenario back to back (same args as plan.sh)
set -euo pipefail
top=/work/main
T=$top/build/tandemctl LS=$top/scripts/loopstore.sh PY=/usr/bin/python3
NAME=plan MNT=/var/tmp/tandem-plan/mnt IMG=/var/tmp/tandem-plan/store.img
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-plan
OUT=$top/build/bench/cal3; mkdir -p "$OUT"
trap '"$T" tracker unload >/dev/null 2>&1 || true; "$LS" down plan >/dev/null 2>&1 || true' EXIT
. "$top/bench/realjobs/jobs.sh"
"$LS" up --size 1024 --bps 10M --dir "$MNT" --name "$NAME" --image "$IMG" >/dev/null
[ -d "$ds" ] || $PY "$top/examples/pytorch/gen_dataset.py" "$ds" --classes 4 --per-class 500 \
	--size 256 --noise 0.2 --seed 97 >/dev/null
sync -f "$MNT"
echo "dataset ready $(date -u +%H:%M:%S)"
for k in 1 2 3; do
	l0=$(cut -d' ' -f1-3 /proc/loadavg)
	"$LS" drop "$NAME"
	"$LS" exec "$NAME" -- "$T" calibrate --dataset "$ds" --sample 0 --warm-time 20s --warm-runs 3 \
		-o "$OUT/prof-three-$k.json" $(insts_of three) -- $(jobs_of three) >"$OUT/prof-three-$k.out" 2>&1
	echo "cal $k (load $l0, $(date -u +%H:%M:%S)): $(jq -c '{C: (.host.cpu_contention*1000|round/1000), rates: [.instances[].rate_bps/1048576 | .*10|round/10], rr: [.instances[] | [.warm_run.rate_min_bps, .warm_run.rate_max_bps] | map(./1048576*10|round/10)], startup: [.instances[].startup_s*100|round/100]}' "$OUT/prof-three-$k.json")"
done
