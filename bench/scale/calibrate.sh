#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Calibration and release at ImageNet's scale (issue 32): `tandemctl
# calibrate` and `tandemctl run --stagger auto` of JOBS jobs on the
# ImageNet-shaped tree of bench/scale/run.sh (1000 class folders x 1281
# files by default), with default options: the tracker is not loaded
# before, so each command sizes it from the tree itself. Checks that no step
# runs untracked and records how long each took.
#
#   bench/scale/calibrate.sh [--classes N] [--files M] [--jobs J]
#                            [--epochs E] [--out DIR] [--tandemctl PATH]
#
# Jobs: `tandemctl loadgen TREE --epochs E --seed i --threads 2 --batch 64`
# (a reader of every file of the tree per epoch, shuffled per seed; no
# compute: each job reads the cached tree as fast as its threads can).
# Results in OUT (default build/bench/scale-calibrate-NxM): calibrate.out,
# prof.json, run.out, run.json, status.json (the tracker after the run),
# and summary.txt (each step's time and the 1-minute load before it).
# Each job's epochs are given to calibrate (--instance ...,epochs=E): a
# warm run is cut after --warm-time, before a boundary of epochs of this size.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
N=1000 M=1281 J=4 E=2 OUT= T=$top/build/tandemctl
while [ $# -gt 0 ]; do
	case $1 in
	--classes) N=$2; shift ;;
	--files) M=$2; shift ;;
	--jobs) J=$2; shift ;;
	--epochs) E=$2; shift ;;
	--out) OUT=$2; shift ;;
	--tandemctl) T=$2; shift ;;
	*) echo "usage: $0 [--classes N] [--files M] [--jobs J] [--epochs E] [--out DIR] [--tandemctl PATH]" >&2
	   exit 2 ;;
	esac
	shift
done
ROOT=/var/tmp/tandem-scale/tree-${N}x$M
OUT=${OUT:-$top/build/bench/scale-calibrate-${N}x$M}
export TANDEM_TRACKER_DIR=${TANDEM_TRACKER_DIR:-/sys/fs/bpf/tandem-bench-scale-cal}
[ "$(id -u)" = 0 ] || { echo "needs root (BPF)" >&2; exit 1; }
for c in "$T" jq; do
	command -v "$c" >/dev/null || { echo "needs $c" >&2; exit 1; }
done
mkdir -p "$OUT"
: >"$OUT/summary.txt"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/summary.txt"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
load1() { cut -d' ' -f1 /proc/loadavg; }

bash "$top/bench/scale/run.sh" --classes "$N" --files "$M" --build-only --out "$OUT/tree" ||
	{ echo "tree failed" >&2; exit 1; }
log "commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null), tree $ROOT ($((N * M)) files), $(nproc) CPUs"
"$T" tracker unload >/dev/null 2>&1
LG="$T loadgen $ROOT --epochs $E --threads 2 --batch 64"
JOBS="$LG --seed 1"
for i in $(seq 2 "$J"); do JOBS="$JOBS ::: $LG --seed $i"; done
# what a warm run cannot see: each job's epochs (model.md, calibrate)
INSTS=
for i in $(seq "$J"); do INSTS="$INSTS --instance name=j$i,order=indep,epochs=$E,seed=$i"; done

l=$(load1) t0=$(now)
# shellcheck disable=SC2086
"$T" calibrate --dataset "$ROOT" -o "$OUT/prof.json" $INSTS -- $JOBS >"$OUT/calibrate.out" 2>&1
rc=$?
log "calibrate: exit $rc, $(since "$t0") s (load $l); $(grep -m1 'calibration took' "$OUT/calibrate.out")"
[ $rc = 0 ] || { tail -n 20 "$OUT/calibrate.out"; exit 1; }
grep -q -i 'untracked\|not available' "$OUT/calibrate.out" &&
	log "calibrate ran something untracked: $(grep -i -m1 'untracked\|not available' "$OUT/calibrate.out")"
log "tracker after calibrate: $("$T" -j tracker status | jq -c '{loaded, files: .tracker.files}')" \
	"(calibrate unloads a tracker it loaded)"

l=$(load1) t0=$(now)
# shellcheck disable=SC2086
"$T" run --dataset "$ROOT" --profile "$OUT/prof.json" --stagger auto --report "$OUT/run.json" \
	-- $JOBS >"$OUT/run.out" 2>&1
rc=$?
log "run --stagger auto, $J jobs: exit $rc, $(since "$t0") s (load $l)"
[ $rc = 0 ] || { tail -n 20 "$OUT/run.out"; exit 1; }
grep -q -i 'untracked' "$OUT/run.out" && log "run: $(grep -i -m1 'untracked' "$OUT/run.out")"
jq -r '"run: released at \([.instances[].start_s | . * 10 | round / 10]) s, predicted \(.predicted_makespan_s * 10 | round / 10) s, measured \(.measured_makespan_s * 10 | round / 10) s; misses \([.instances[].misses]), own hits \([.instances[].own_hits]), shared hits \([.instances[].shared_hits])"' \
	"$OUT/run.json" | tee -a "$OUT/summary.txt"
"$T" -j tracker status >"$OUT/status.json"
log "tracker after run: $(jq -c '.tracker | {files, max_files, pages_tracked, max_pages, access_unknown}' "$OUT/status.json")"
tracked=$(jq '[.instances[] | select(.misses == null)] | length' "$OUT/run.json")
log "instances without tracker counts: $tracked of $J"
"$T" tracker unload >/dev/null 2>&1
[ "$tracked" = 0 ]
