#!/usr/bin/env bash
# Validation of the makespan model against runs in the VM rig: for each
# scenario (bench/stagger/scenarios/NAME.sh) one VM boot that writes the
# dataset, calibrates (storage, memory, the jobs' rates from warm runs: the
# model gets nothing by hand), then measures `tandemctl run` over the
# scenario's grid of staggers and once with --stagger auto.
#
#   bench/stagger/run.sh [--scenarios a,b,...] [--out DIR] [--no-wait]
#       (default scenarios: fits-indep,fits-same,differ,nodram)
#   bench/stagger/run.sh --report DIR          # tables and plots again
#
# Timing matters and this machine is shared: before each boot the script
# waits until no qemu-system runs (--no-wait: don't) and records the load
# average before and after. Output per scenario in OUT/NAME/: tap.log (raw),
# profile.json, runs.jsonl, table.md, m.svg (M(delta) with the measured
# points); OUT/summary.md has every table. Default OUT:
# build/bench/stagger-TIME.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/bench/stagger
B=${B:-build}
T=$top/$B/tandemctl
scenarios=fits-indep,fits-same,differ,nodram out= wait=1 report_only=
while [ $# -gt 0 ]; do
	case $1 in
	--scenarios) scenarios=$2; shift ;;
	--out) out=$2; shift ;;
	--no-wait) wait=0 ;;
	--report) report_only=$2; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
. "$here/lib.sh"

if [ -n "$report_only" ]; then
	summary "$report_only"
	exit 0
fi
for f in "$top/kmod/tandem.ko" "$T"; do
	[ -e "$f" ] || { echo "run.sh: $f missing: run make" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "run.sh: needs jq (make deps)" >&2; exit 1; }
out=${out:-$top/$B/bench/stagger-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
for s in ${scenarios//,/ }; do
	[ -f "$here/scenarios/$s.sh" ] || { echo "run.sh: no scenario $s" >&2; exit 2; }
	run_scenario "$here/scenarios/$s.sh" "$out/$s" "$wait" "$here/vm-stagger.sh"
	scenario_report "$out/$s"
done
summary "$out"
echo "results: $out/summary.md"
