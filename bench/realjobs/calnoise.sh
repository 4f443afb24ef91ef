#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# How much calibrate's terms vary from one calibration to the next, and by
# which build: calibrate each scenario of scenarios.sh (jobs.sh) REPS times
# with each tandemctl given, interleaved (rep 1 of every build and scenario,
# then rep 2, ...), each calibration alone under $QUIET. The profiles go to
# OUT/prof-SCENARIO-NAME-REP.json, a line per profile to OUT/calnoise.jsonl
# (rate, CPU per byte, start-up, read-ahead, exit of each instance, and
# whether epoch 2 set the rate); score them against a bench's runs with
# remodel.py.
#
#   bench/realjobs/calnoise.sh [--reps N] [--scenarios "same2 differ2"]
#                              [NAME=TANDEMCTL ...]   (default: new=build/tandemctl)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/bench/realjobs
LS=$top/scripts/loopstore.sh
PY=/usr/bin/python3
OUT=${OUT:-$top/build/bench/calnoise}
NAME=${STORE_NAME:-rj}
MNT=${STORE_DIR:-/var/tmp/tandem-rj/mnt}
QUIET=${QUIET-$( [ -x /work/bin/quiet ] && echo /work/bin/quiet || true )}
WARM=${WARM:-30s}
export TANDEM_TRACKER_DIR=${TANDEM_TRACKER_DIR:-/sys/fs/bpf/tandem-rj}
reps=3 scenarios="same2 differ2" builds=()
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift ;;
	--scenarios) scenarios=$2; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*=*) builds+=("$1") ;;
	*) echo "calnoise.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ ${#builds[@]} -gt 0 ] || builds=("new=$top/build/tandemctl")
. "$here/jobs.sh"
mkdir -p "$OUT"
q() { if [ -n "$QUIET" ]; then $QUIET bash -c "$*"; else bash -c "$*"; fi; }

bash "$here/measure.sh" setup >/dev/null
for rep in $(seq "$reps"); do
	for s in $scenarios; do
		jobs_of "$s" >/dev/null
		for b in "${builds[@]}"; do
			n=${b%%=*} T=${b#*=} p=$OUT/prof-$s-$n-$rep.json
			q "'$LS' drop '$NAME' && '$LS' exec '$NAME' -- '$T' calibrate --dataset '$ds' --sample 0 \
				--warm-time $WARM -o '$p' $(insts_of "$s") -- $(jobs_of "$s") \
				>'$OUT/calibrate-$s-$n-$rep.out' 2>&1" ||
				{ tail -n 20 "$OUT/calibrate-$s-$n-$rep.out"; exit 1; }
			jq -c --arg s "$s" --arg b "$n" --argjson rep "$rep" --arg p "$p" \
				'{scenario: $s, build: $b, rep: $rep, profile: $p,
				  calibration_s: .calibration_seconds,
				  inst: [.instances[] | {name, rate_mib_s: (.rate_bps / 1048576),
				         cpu_s_per_mib: (.cpu_s_per_byte * 1048576),
				         cpu_task_s_per_mib: (.cpu_task_s_per_byte * 1048576),
				         startup_s, window_mib: (.window_bytes / 1048576), epoch_gap_s, exit_s,
				         epoch2: .warm_run.epoch2_seen, exit_from: .warm_run.exit_from}]}' \
				"$p" | tee -a "$OUT/calnoise.jsonl" |
				jq -r '"\(.scenario) \(.build) rep \(.rep): " + ([.inst[] | "\(.name) \(.rate_mib_s * 10 | round / 10) MiB/s \(.cpu_s_per_mib * 1000 | round / 1000) s/MiB" + (if .epoch2 then " (epoch 2)" else "" end)] | join(", "))'
		done
	done
done
