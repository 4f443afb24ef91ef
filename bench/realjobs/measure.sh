#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What makes real PyTorch jobs (examples/pytorch/train.py) differ from the
# model's emulator, measured on the host with a throttled loop store
# (scripts/loopstore.sh) and the BPF tracker. One unit per call, each short
# (one repetition of one configuration), so that a caller can run each under
# /work/bin/quiet and interleave repetitions:
#
#   measure.sh setup                 store + datasets (a, b, c: 2000 JPEGs each)
#   measure.sh startup               exec -> first dataset read (tracker), and the steps
#   measure.sh startupmode MODE      import time under tandemctl run, tracked / untracked, or direct
#   measure.sh decode                CPU per image / per byte: loader vs training, 4 image sizes
#   measure.sh importcpu             CPU seconds of python3 + import torch, torchvision
#   measure.sh share ARCH WORKERS    warm rate alone vs with a second job (2 cores)
#   measure.sh storage MODE          cold epoch at the cap: alone, shared2, separate2, shared3, separate3
#   measure.sh calibrate             tandemctl calibrate on dataset a (its ImageFolder tree) with the two jobs
#   measure.sh run STAGGER           tandemctl run of the two jobs (cold) at STAGGER (or auto)
#   measure.sh down                  remove the store
#
# Results: one JSON line per unit appended to $OUT/results.jsonl (default
# build/bench/realjobs), with the load average before and after.
# Documentation/results/validation.md, "Real PyTorch jobs", has the numbers.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/bench/realjobs
T=$top/${B:-build}/tandemctl
LS=$top/scripts/loopstore.sh
PY=/usr/bin/python3
EX=$top/examples/pytorch
OUT=${OUT:-$top/build/bench/realjobs}
NAME=${STORE_NAME:-rj}
MNT=${STORE_DIR:-/var/tmp/tandem-rj/mnt}
IMG=${STORE_IMAGE:-/var/tmp/tandem-rj/store.img}
CAP=${CAP:-10M}
export TANDEM_TRACKER_DIR=${TANDEM_TRACKER_DIR:-/sys/fs/bpf/tandem-rj}
mkdir -p "$OUT"
# the jobs: FAST is disk-bound at 10 MiB/s on these datasets, SLOW compute-bound
FAST=(--arch shufflenet_v2_x0_5 --size 32 --batch-size 64 --workers 2)
TR=("$PY" "$EX/train.py")
SLOW=(--arch mobilenet_v3_small --size 32 --batch-size 32 --workers 2)

load() { cut -d' ' -f1-3 /proc/loadavg; }
record() { # record UNIT JSON: one line with the load
	jq -c --arg unit "$1" --arg load "$L0" --arg load1 "$(load)" \
		'. + {unit: $unit, load_before: $load, load_after: $load1, time: (now | todate)}' <<<"$2" \
		>>"$OUT/results.jsonl"
	jq -c --arg unit "$1" '{unit: $unit} + .' <<<"$2" | cut -c1-600
}
cgroup() { "$LS" path "$NAME"; }
majmin() { findmnt -n -o MAJ:MIN --target "$MNT" | tr -d " "; }
warm() { cat "$MNT/$1"/train/*/* >/dev/null; }
cold() { "$LS" drop "$NAME"; }
launch() { "$LS" exec "$NAME" -- $PY "$here/launch.py" --cgroup "$(cgroup)" --dev "$(majmin)" "$@"; }
L0=$(load)

case ${1:-} in
setup)
	"$LS" up --size 1024 --bps "$CAP" --dir "$MNT" --name "$NAME" --image "$IMG"
	for d in a b c; do
		[ -d "$MNT/$d/flat" ] && continue
		$PY "$EX/gen_dataset.py" "$MNT/$d/train" --classes 4 --per-class 500 --size 256 \
			--noise 0.2 --seed "$(printf %d "'$d")" --flat "$MNT/$d/flat"
	done
	mkdir -p "$MNT/dec"
	for s in 64 128 256 512; do
		[ -d "$MNT/dec/s$s" ] ||
			$PY "$EX/gen_dataset.py" "$MNT/dec/s$s" --classes 4 --per-class 64 --size $s --noise 0.2
	done
	sync -f "$MNT"
	;;
startup)
	# exec -> first dataset read: B (date) is released when the tracker has seen
	# A (train.py, cold) load its first dataset pages (progress: 1e-4 of the pages)
	cold
	"$LS" exec "$NAME" -- "$T" run --dataset "$MNT/a/train" --stagger progress:0.0001 --no-register \
		--report "$OUT/startup-run.json" -- "${TR[@]}" "$MNT/a/train" "${FAST[@]}" --epochs 1 ::: true >/dev/null 2>&1
	r=$(jq -c '{first_read_s: (.instances[1].start_s - .instances[0].start_s),
		progress: .instances[0].progress_at_next_release, epoch1_end_s: .instances[0].end_s}' \
		"$OUT/startup-run.json")
	cold
	s=$("$LS" exec "$NAME" -- env T0="$(date +%s.%N)" $PY "$here/startup.py" "$MNT/a/train" "${FAST[@]}")
	record startup "$(jq -c --argjson s "$s" '. + {steps: $s}' <<<"$r")"
	;;
startupmode)
	# the same start-up steps under tandemctl run with the tracker (B released
	# at A's first dataset read), without it (--no-track), or started directly
	cold
	sp=("$PY" "$here/startup.py" "$MNT/a/train" "${FAST[@]}")
	case $2 in
	tracked|untracked)
		opt=(--stagger progress:0.0001) && [ "$2" = untracked ] && opt=(--stagger 0 --no-track)
		"$LS" exec "$NAME" -- "$T" run --dataset "$MNT/a/train" "${opt[@]}" --no-register \
			--report "$OUT/startup-run.json" -- \
			sh -c 'T0=$(date +%s.%N); echo "$T0" > "$0.t0"; exec env T0="$T0" "$@"' "$OUT/st" "${sp[@]}" \
			::: sh -c 'date +%s.%N > "$0.t1"' "$OUT/st" >"$OUT/startup-run.out" 2>&1
		s=$(grep '^{"interp"' "$OUT/startup-run.out")
		fr=null
		[ "$2" = tracked ] && fr=$(echo "$(cat "$OUT/st.t1") - $(cat "$OUT/st.t0")" | bc)
		;;
	direct)
		s=$("$LS" exec "$NAME" -- env T0="$(date +%s.%N)" "${sp[@]}")
		fr=null
		;;
	*) echo "startupmode tracked|untracked|direct" >&2; exit 2 ;;
	esac
	record startupmode "$(jq -cn --arg mode "$2" --argjson s "$s" --argjson fr "$fr" \
		'{mode: $mode, first_read_s: $fr, steps: $s}')"
	;;
decode)
	for s in 64 128 256 512; do
		for a in FAST SLOW; do
			declare -n arr=$a
			r=$($PY "$here/decode.py" "$MNT/dec/s$s" "${arr[@]:0:6}" --images 256)
			record decode "$(jq -c --arg job $a --argjson px $s '. + {job: $job, px: $px}' <<<"$r")"
		done
	done
	;;
importcpu)
	r=$($PY -c 'import resource, subprocess, sys, json
subprocess.run([sys.executable, "-c", "import torch, torchvision; from torchvision import datasets, transforms"], check=True)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"cpu_s": u.ru_utime + u.ru_stime}))')
	record importcpu "$r"
	;;
share)
	# warm data, so no storage: the rate alone, then two identical jobs together
	arch=$2 workers=$3
	warm a
	args=(--arch "$arch" --size 32 --batch-size 64 --workers "$workers" --epochs 2)
	[ "$arch" = mobilenet_v3_small ] && args[5]=32
	r1=$($PY "$here/launch.py" -- "${TR[@]}" "$MNT/a/train" "${args[@]}")
	r2=$($PY "$here/launch.py" -- "${TR[@]}" "$MNT/a/train" "${args[@]}" ::: "${TR[@]}" "$MNT/a/train" "${args[@]}" --seed 2)
	record share "$(jq -cn --arg arch "$arch" --argjson w "$workers" --argjson a "$r1" --argjson t "$r2" \
		'{arch: $arch, workers: $w, alone: $a, together: $t}')"
	;;
storage)
	# cold epoch of FAST jobs at the cap; shared: all on a, separate: a, b, c
	mode=$2
	case $mode in
	alone) sets=(a) ;; shared2) sets=(a a) ;; separate2) sets=(a b) ;;
	shared3) sets=(a a a) ;; separate3) sets=(a b c) ;;
	separate2w) sets=(a b) ;;	# job a with 1 worker, job b with 4
	*) echo "storage: alone|shared2|separate2|shared3|separate3|separate2w" >&2; exit 2 ;;
	esac
	cold
	cmd=() seed=1
	for d in "${sets[@]}"; do
		[ ${#cmd[@]} -gt 0 ] && cmd+=(:::)
		cmd+=("${TR[@]}" "$MNT/$d/train" "${FAST[@]}" --epochs 1 --seed "$seed")
		if [ "$mode" = separate2w ]; then cmd+=(--workers $((seed == 1 ? 1 : 4))); fi
		seed=$((seed + 1))
	done
	r=$(launch -- "${cmd[@]}")
	record storage "$(jq -c --arg mode "$mode" --argjson n ${#sets[@]} '{mode: $mode, n: $n} + .' <<<"$r")"
	;;
calibrate)
	cold
	"$LS" exec "$NAME" -- "$T" calibrate --dataset "$MNT/a/train" --sample 0 --warm-time 30s \
		-o "$OUT/profile.json" \
		--instance name=slow,order=indep,epochs=2,seed=1 --instance name=fast,order=indep,epochs=2,seed=2 -- \
		"${TR[@]}" "$MNT/a/train" "${SLOW[@]}" --epochs 2 --seed 1 ::: "${TR[@]}" "$MNT/a/train" "${FAST[@]}" --epochs 2 --seed 2 \
		>"$OUT/calibrate.out" 2>&1
	record calibrate "$(jq -c '{calibration_seconds, bw: .storage.bandwidth_bps,
		rates: [.instances[] | .rate_bps], dataset: .dataset.bytes,
		terms: [.instances[] | {name, cpu_s_per_byte, startup_s, startup_cpu_s, epoch_gap_s,
			streams, window_bytes, first_read_s: .warm_run.first_read_s}]}' "$OUT/profile.json")"
	;;
run)
	st=$2
	cold
	"$LS" exec "$NAME" -- "$T" run --dataset "$MNT/a/train" --profile "$OUT/profile.json" --stagger "$st" \
		--no-register --report "$OUT/run.json" -- \
		"${TR[@]}" "$MNT/a/train" "${SLOW[@]}" --epochs 2 --seed 1 ::: "${TR[@]}" "$MNT/a/train" "${FAST[@]}" --epochs 2 --seed 2 \
		>"$OUT/run.out" 2>&1
	record run "$(jq -c --arg st "$st" '{stagger: $st, predicted: .predicted_makespan_s,
		measured: .measured_makespan_s, search: .search,
		inst: [.instances[] | {requested_s, start_s, end_s, predicted_end_s, misses, own_hits, shared_hits}]}' \
		"$OUT/run.json")"
	;;
down)
	"$T" tracker unload >/dev/null 2>&1 || true
	"$LS" down "$NAME"
	rm -f "$IMG"
	rmdir "$(dirname "$IMG")" 2>/dev/null || true
	;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 2
	;;
esac
