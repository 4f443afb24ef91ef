#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The model's validation on real PyTorch jobs (issue 14): three scenarios on
# the host's throttled loop store (measure.sh's store and dataset a: 2000
# JPEGs, 10 MiB/s) with the BPF tracker, each calibrated once, then a grid
# of staggers plus --stagger auto, REPS times, interleaved (every stagger of
# a repetition before the next repetition). Each unit (one calibrate, one
# run) under $QUIET (default /work/bin/quiet when it exists).
#
#   bench/realjobs/scenarios.sh [--reps N] [--scenarios "same2 differ2 three"]
#   (GRID="0 12" for other staggers; PROFILES=DIR to take DIR/prof-SCENARIO.json
#   instead of calibrating; RECAL=1 to calibrate each scenario again before each
#   repetition's grid, into prof-SCENARIO-rREP.json, so the runs meet a
#   calibration made minutes before them, as a user's runs do)
#   python3 bench/realjobs/scenarios.py [OUT/scenarios.jsonl]     the tables
#   bash bench/realjobs/measure.sh down     afterwards: the store and the tracker
#                                           the runs loaded stay until then (a
#                                           loaded tracker's hooks run on every
#                                           read and page fault of the machine)
#
# Scenarios (train.py at 32 px, 2 epochs, 2 DataLoader workers each):
#   same2    two identical jobs: shufflenet_v2_x0_5, batch 64 (seeds 1, 2)
#   differ2  two that differ: mobilenet_v3_small batch 32, shufflenet batch 64
#   three    three jobs: mobilenet batch 32, shufflenet batch 64, shufflenet
#            batch 32; staggers S are k x S for instance k
# Grid: 0 2 4 6 9 12 s and auto. Results: one JSON line per run in
# $OUT/scenarios.jsonl (default build/bench/realjobs), the load before and
# after, the profile of each scenario in $OUT/prof-SCENARIO.json.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/bench/realjobs
T=$top/${B:-build}/tandemctl
LS=$top/scripts/loopstore.sh
PY=/usr/bin/python3
OUT=${OUT:-$top/build/bench/realjobs}
NAME=${STORE_NAME:-rj}
MNT=${STORE_DIR:-/var/tmp/tandem-rj/mnt}
QUIET=${QUIET-$( [ -x /work/bin/quiet ] && echo /work/bin/quiet || true )}
export TANDEM_TRACKER_DIR=${TANDEM_TRACKER_DIR:-/sys/fs/bpf/tandem-rj}
# tandemctl run leaves the tracker loaded (pinned) for stats: unload it at exit
trap '"$T" tracker unload >/dev/null 2>&1 || true' EXIT
reps=2 scenarios="same2 differ2 three"
GRID=${GRID:-0 2 4 6 9 12 auto}
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift ;;
	--scenarios) scenarios=$2; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "scenarios.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$OUT"
. "$here/jobs.sh"
q() { if [ -n "$QUIET" ]; then $QUIET bash -c "$*"; else bash -c "$*"; fi; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
qemus() { pgrep -c qemu-system || true; }

bash "$here/measure.sh" setup >/dev/null
calibrate() { # $1 scenario, $2 profile path
	echo "# $1: calibrate -> $2"
	# shellcheck disable=SC2046
	q "'$LS' drop '$NAME' && '$LS' exec '$NAME' -- '$T' calibrate --dataset '$ds' --sample 0 --warm-time 30s --warm-runs 3 \
		-o '$2' $(insts_of "$1") -- $(jobs_of "$1") >'$2.out' 2>&1" ||
		{ tail -n 20 "$2.out"; exit 1; }
}
for s in $scenarios; do
	jobs_of "$s" >/dev/null
	if [ -n "${PROFILES:-}" ]; then	# calibrated before: PROFILES/prof-SCENARIO.json
		cp "$PROFILES/prof-$s.json" "$OUT/prof-$s.json"
		echo "# $s: profile $PROFILES/prof-$s.json"
	elif [ -z "${RECAL:-}" ]; then
		calibrate "$s" "$OUT/prof-$s.json"
	fi
done
for rep in $(seq "$reps"); do
	for s in $scenarios; do
		prof=$OUT/prof-$s.json
		if [ -n "${RECAL:-}" ] && [ -z "${PROFILES:-}" ]; then
			prof=$OUT/prof-$s-r$rep.json
			calibrate "$s" "$prof"
		fi
		for st in $GRID; do
			l0=$(load) v0=$(qemus) p0=$(q "$(declare -f probe); probe")
			q "'$LS' drop '$NAME' && '$LS' exec '$NAME' -- '$T' run --dataset '$ds' \
				--profile '$prof' --stagger '$st' --no-register --report '$OUT/run.json' \
				-- $(jobs_of "$s") >'$OUT/run.out' 2>&1" || { tail -n 20 "$OUT/run.out"; exit 1; }
			jq -c --arg s "$s" --arg st "$st" --argjson rep "$rep" --arg l0 "$l0" --arg l1 "$(load)" \
				--argjson vms "$v0" --argjson probe "$p0" --arg prof "${prof##*/}" \
				'{scenario: $s, stagger: $st, rep: $rep, profile: $prof, load_before: $l0, load_after: $l1, qemu: $vms,
				  probe_s: $probe, time: (now | todate), predicted: .predicted_makespan_s, measured: .measured_makespan_s,
				  search: .search,
				  inst: [.instances[] | {name, requested_s, start_s, end_s, predicted_end_s,
				         misses, own_hits, shared_hits, cpu_s}]}' "$OUT/run.json" | tee -a "$OUT/scenarios.jsonl" |
				jq -r '"\(.scenario) \(.stagger) rep \(.rep): M \(.measured * 100 | round / 100) s, predicted \(.predicted * 100 | round / 100) s"'
		done
	done
done
