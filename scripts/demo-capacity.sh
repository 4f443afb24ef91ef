#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo, part 2: a dataset larger than DRAM, in the VM rig's kmem mode
# (node 0: 768 MiB of RAM with the CPUs; node 1: 1024 MiB of dax/kmem memory
# in a lower tier, the path real CXL memory takes; the data disk throttled to
# 50 MiB/s). bench/tiering/capacity-kmem.sh's static scenario, unchanged, once
# per configuration (one VM boot each, under the rig's lock): a 640 MiB
# dataset read by two `tandemctl loadgen` jobs (3 epochs, independent
# shuffles) next to a 520 MiB "model" that writes its memory as training
# does, with
#   off      the default kernel (no demotion, no NUMA balancing), no tandem.ko
#   tiering  the kernel's own tiering (demotion_enabled=1, numa_balancing=2)
#   steer    Tandem: tandem.ko steering the dataset's pages to node 1
# Prints the wall time of each, where the dataset's pages are (move_pages
# over every page) and, with steering, `tandemctl residency`.
#
#   scripts/demo-capacity.sh [--out DIR]        (default build/demo/capacity)
#
# Needs root, /dev/kvm not needed (QEMU TCG), tandem.ko built for the rig
# (make vm-modules) and QEMU; when one is missing it says which and exits 3.
# About 2 minutes per boot on an idle 2-core machine (Documentation/tiering.md,
# "The scenario"; results with 3 runs each there).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/demo-lib.sh"
B=${B:-build}
out=$top/$B/demo/capacity
PART="dataset > DRAM, VM kmem mode"
[ "${1:-}" = --out ] && out=$2
need() { demo_skip "$PART" "$*"; exit 3; }
[ "$(id -u)" = 0 ] || need "needs root (the VM rig)"
command -v qemu-system-x86_64 >/dev/null || need "qemu-system-x86_64 missing (make deps)"
for f in "$top/kmod/tandem.ko" "$top/$B/tandemctl" "$top/$B/bench/steerbench"; do
	[ -e "$f" ] || need "$f missing: run make all vm-modules"
done
command -v python3 >/dev/null || need "python3 missing"
rm -rf "$out"
mkdir -p "$out"
t0=$(date +%s)
echo "### the VM rig, kmem mode: node 0 768 MiB (CPUs), node 1 1024 MiB dax/kmem (lower tier), disk 50 MiB/s"
echo "# a 640 MiB dataset, two loadgen jobs (3 epochs, independent shuffles, 4 ms CPU + 10 ms per 1 MiB sample), a 520 MiB model"
echo "# $(demo_load)"
if ! flock -n /tmp/tandem-vm.lock true; then
	echo "# another VM holds the rig's lock (/tmp/tandem-vm.lock): waiting for it"
	w0=$(date +%s)
	flock /tmp/tandem-vm.lock true
	echo "# waited $(($(date +%s) - w0)) s for the lock"
fi
bash "$top/bench/tiering/capacity-kmem.sh" --configs off,tiering,steer --reps 1 --out "$out" \
	>"$out/bench.txt" 2>&1
# the wall time of each configuration from the summary's first table
wall() { awk -v c="$1" '/^config +wall s/ { t = 1; next } t && $1 == c { print $2; exit } t && /^$/ { exit }' "$out/summary.txt"; }
place() { awk -v c="$1" '/^config +dataset node0/ { t = 1; next }
	t && $1 == c { k = 0; for (i = 2; i <= NF && k < 2; i++) if ($i !~ /^\[/) v[++k] = $i; print v[1] " / " v[2]; exit }' "$out/summary.txt"; }
if [ ! -s "$out/summary.txt" ]; then
	tail -n 20 "$out/bench.txt"
	echo "demo (capacity): the bench did not finish; its output: $out/bench.txt" >&2
	demo_row "$PART" - - "failed: see $out/bench.txt"
	exit 1
fi
sed -n '/^runs/,/^$/p' "$out/summary.txt" | sed 's/^/# /'
printf '%-9s %-58s %9s %22s %17s\n' config "" "wall (s)" "dataset node0 / node1" "x default kernel"
off=$(wall off)
for c in off tiering steer; do
	case $c in
	off) what="default kernel (no demotion, no NUMA balancing)" ;;
	tiering) what="kernel tiering (demotion + NUMA-balancing promotion)" ;;
	steer) what="Tandem: tandem.ko steers the dataset to node 1" ;;
	esac
	w=$(wall $c)
	printf '%-9s %-58s %9s %18s MiB %17s\n' "$c" "$what" "${w:--}" "$(place $c)" \
		"$(awk -v w="$w" -v o="$off" 'BEGIN { if (w == "" || o == "" || o == 0) print "-"; else printf "%.2fx", w / o }')"
done
echo "(one run each: the run-to-run spread is not measured here; Documentation/tiering.md has 3 runs each)"
echo "### tandemctl residency ds, in the steer run after the jobs"
r=$(grep -a '^C residency ' "$out/steer.1/vm/tap.log" | tail -n 1 | sed 's/^C residency //')
if [ -n "$r" ]; then
	jq -r '(.datasets // [.])[] | "#   ds: \(.pages_cached) pages cached; pages per node: \([.node_pages | to_entries[] | "node\(.key)=\(.value)"] | join(" ")); steered=\(.counters.steered) prefetched=\(.counters.prefetched)"' <<<"$r" 2>/dev/null ||
		echo "#   $r"
else
	echo "#   (no residency line in $out/steer.1/vm/tap.log)"
fi
grep -a '^  \(off\|tiering\|steer\) ' "$out/summary.txt" | grep pgdemote | sed 's/^/# counters: /'
st=$(wall steer) ti=$(wall tiering)
if [ -n "$off" ] && [ -n "$st" ] && [ -n "$ti" ]; then
	awk -v o="$off" -v t="$ti" -v s="$st" 'BEGIN {
		printf "steering: %.1f s against %.1f s for the default kernel (%.2fx) and %.1f s for kernel tiering (%.2fx); one run each\n",
			s, o, s / o, t, s / t }'
	demo_row "$PART" "steer: $st s" "default: $off s; tiering: $ti s" \
		"$(awk -v o="$off" -v t="$ti" -v s="$st" 'BEGIN { printf "%.2fx default, %.2fx tiering (1 run each)", s / o, s / t }')"
else
	demo_row "$PART" "steer: ${st:--} s" "default: ${off:--} s; tiering: ${ti:--} s" "incomplete: see $out/summary.txt"
fi
echo "raw output: $out/CONFIG.1/vm/tap.log; the bench's summary: $out/summary.txt"
echo "# $(demo_load); the capacity part took $(($(date +%s) - t0)) s"
