#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: what Tandem does, each part measured here next to its baseline,
# then one summary table. Parts (each says what it needs and is skipped,
# with the reason, when that is missing):
#   1. scripts/demo-real.sh      staggering: three real PyTorch jobs on a
#                                throttled store here, --stagger auto against
#                                simultaneous start, repeated, interleaved
#   2. scripts/demo-predict.sh   the predictor: a held-out model's plain ONNX
#                                export predicted, then timed here
#   3. scripts/demo-scratch.sh   the scratch tier: a checkpoint to a scratch
#                                against one to the durable store
#   4. scripts/demo-capacity.sh  a dataset larger than DRAM in the VM rig's
#                                CXL-like (kmem) mode: the default kernel,
#                                kernel tiering and Tandem's steering
#
#   scripts/demo.sh [--out DIR] [--parts "real predict scratch capacity"]
#
# Output in DIR (default build/demo): demo.txt (all of it), summary.tsv, and
# each part's folder. About 10.5 minutes on an idle 2-core machine
# (Documentation/guide.md, "How long").
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/demo-lib.sh"
B=${B:-build}
out=$top/$B/demo parts="real predict scratch capacity"
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift ;;
	--parts) parts=$2; shift ;;
	*) echo "demo.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$out"
export DEMO_SUMMARY=$out/summary.tsv
: >"$DEMO_SUMMARY"
: >"$out/durations"
exec > >(tee "$out/demo.txt") 2>&1
t0=$(date +%s)
echo "# make demo, $(date -u '+%F %T UTC'), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null)$(git -C "$top" diff --quiet HEAD 2>/dev/null || echo +changes), $(nproc) CPUs"
echo "# uptime: $(uptime)"
n=$(pgrep -c qemu-system || true)
[ "${n:-0}" -gt 0 ] && echo "# note: $n VM(s) running on this machine: timings will be slower and noisier"
rc=0
part() { # part NAME SCRIPT: run one part, time it; a row "failed" when it wrote none
	local a n0 r d
	a=$(date +%s) n0=$(wc -l <"$DEMO_SUMMARY")
	echo
	bash "$top/scripts/$2" --out "$out/$1"
	r=$?
	d=$(($(date +%s) - a))
	if [ "$(wc -l <"$DEMO_SUMMARY")" = "$n0" ]; then
		demo_row "$1" - - "failed (exit $r): see above"
	fi
	echo "$d" >>"$out/durations"
	[ $r = 0 ] || [ $r = 3 ] || rc=1
	echo "# part $1: $d s, $(demo_load)"
}
for p in $parts; do
	case $p in
	real) part real demo-real.sh ;;
	predict) part predict demo-predict.sh ;;
	scratch) part scratch demo-scratch.sh ;;
	capacity) part capacity demo-capacity.sh ;;
	*) echo "demo.sh: unknown part $p" >&2; exit 2 ;;
	esac
done
echo
echo "### summary (lower is better for every time; gain: measured against baseline, from the medians; see each part above)"
paste "$DEMO_SUMMARY" "$out/durations" | awk -F'\t' '
	BEGIN { printf "%-41s | %-34s | %-36s | %-44s | %s\n", "part", "measured", "baseline", "gain", "took"
		s = sprintf("%200s", ""); gsub(/ /, "-", s); print substr(s, 1, 172) }
	{ printf "%-41s | %-34s | %-36s | %-44s | %s s\n", $1, $2, $3, $4, $5 }'
echo "# the whole demo took $(($(date +%s) - t0)) s; uptime at the end: $(uptime)"
exit $rc
