#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo, part 2: a dataset larger than DRAM, in the VM rig's kmem mode
# (node 0: 768 MiB of RAM with the CPUs; node 1: 1024 MiB of dax/kmem memory
# in a lower tier, the path real CXL memory takes; the data disk throttled to
# 50 MiB/s). bench/tiering/capacity-kmem.sh's static scenario, unchanged, once
# per configuration, the rig's lock held for the whole part (no other VM
# starts between its boots): off, steer and prefetch-order in
# turn in one VM boot, tiering in its own (capacity-kmem.sh --one-boot: the
# dataset written once; tandem.ko unloaded and the cache dropped between
# two; see that script for why tiering boots alone): a 640 MiB
# dataset read by two `tandemctl loadgen` jobs (3 epochs, independent
# shuffles) next to a 520 MiB "model" that writes its memory as training
# does, with
#   off      the default kernel (no demotion, no NUMA balancing), no tandem.ko
#   tiering  the kernel's own tiering (demotion_enabled=1, numa_balancing=2)
#   steer    Tandem: tandem.ko loaded (steering to node 1, its headroom on
#            node 0), the dataset registered
#   prefetch-order  Tandem: as steer, plus `tandemctl prefetch` of the
#            dataset in the order the two jobs first need the files (what
#            `tandemctl run --prefetch-order` does)
# Prints the wall time of each, where the dataset's pages are (move_pages
# over every page) and, with tandem.ko, `tandemctl residency` (pages per
# node, steered and prefetched pages) with a sentence computed from it.
#
#   scripts/demo-capacity.sh [--out DIR]        (default build/demo/capacity)
#
# Needs root, QEMU (TCG: no /dev/kvm needed) and tandem.ko built for the
# rig (make vm-modules); when one is missing it says which and exits 3.
# Two boots, about 4 minutes on an idle 2-core machine (four boots, one per
# configuration, took 6.5 minutes; Documentation/tiering.md has 3 runs each,
# a boot each).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/demo-lib.sh"
B=${B:-build}
out=$top/$B/demo/capacity
PART="dataset > DRAM, VM kmem mode"
[ "${1:-}" = --out ] && out=$2
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
echo "# off, steer and prefetch-order one after another in one VM boot (the cache dropped and tandem.ko unloaded between them), tiering in a boot of its own"
echo "# $(demo_load)"
# the rig's lock, held for both boots (no other VM starts between them); the
# descriptor is closed when this script ends, which frees it
exec 9>>/tmp/tandem-vm.lock
if ! flock -n 9; then
	echo "# another VM holds the rig's lock (/tmp/tandem-vm.lock): waiting for it"
	w0=$(date +%s)
	flock 9
	echo "# waited $(($(date +%s) - w0)) s for the lock"
fi
t1=$(date +%s)
CONFIGS="off tiering steer prefetch-order"
TANDEM_VM_LOCKED=1 bash "$top/bench/tiering/capacity-kmem.sh" --configs "${CONFIGS// /,}" --reps 1 --one-boot \
	--out "$out" >"$out/bench.txt" 2>&1 9>&-
flock -u 9
exec 9>&-
# the wall time of each configuration from the summary's first table
# (nothing for a configuration that did not finish: the summary has "-")
wall() { awk -v c="$1" '/^config +wall s/ { t = 1; next } t && $1 == c { if ($2 ~ /^[0-9.]+$/) print $2; exit } t && /^$/ { exit }' "$out/summary.txt"; }
place() { awk -v c="$1" '/^config +dataset node0/ { t = 1; next }
	t && $1 == c { k = 0; for (i = 2; i <= NF && k < 2; i++) if ($i !~ /^\[/) v[++k] = $i; print v[1] " / " v[2]; exit }' "$out/summary.txt"; }
if [ ! -s "$out/summary.txt" ]; then
	tail -n 20 "$out/bench.txt"
	echo "demo (capacity): the bench did not finish; its output: $out/bench.txt" >&2
	demo_row "$PART" - - "failed: see $out/bench.txt"
	exit 1
fi
sed -n '/^runs/,/^$/p' "$out/summary.txt" | sed 's/^/# /'
printf '%-15s %-58s %9s %22s %17s\n' config "" "wall (s)" "dataset node0 / node1" "x default kernel"
off=$(wall off)
for c in $CONFIGS; do
	case $c in
	off) what="default kernel (no demotion, no NUMA balancing)" ;;
	tiering) what="kernel tiering (demotion + NUMA-balancing promotion)" ;;
	steer) what="Tandem: tandem.ko loaded, the dataset registered" ;;
	prefetch-order) what="Tandem: as steer, plus its prefetch in the jobs' order" ;;
	esac
	w=$(wall "$c")
	printf '%-15s %-58s %9s %18s MiB %17s\n' "$c" "$what" "${w:--}" "$(place "$c")" \
		"$(awk -v w="$w" -v o="$off" 'BEGIN { if (w == "" || o == "" || o == 0) print "-"; else printf "%.2fx", w / o }')"
done
echo "(one run each: the run-to-run spread is not measured here; Documentation/tiering.md has 3 runs each)"
grep -a '^  \(off\|tiering\|steer\|prefetch-order\) ' "$out/summary.txt" | grep pgdemote | sed 's/^/# counters: /'
for c in steer prefetch-order; do
	log=$out/$c.1/vm/tap.log
	echo "### tandemctl residency ds, in the $c run after the jobs"
	r=$(grep -a '^C residency ' "$log" 2>/dev/null | tail -n 1 | sed 's/^C residency //')
	if [ -z "$r" ]; then
		echo "#   (no residency line in $log)"
		continue
	fi
	jq -r '(.datasets // [.])[] | "#   ds: \(.pages_cached) pages cached; pages per node: \([.node_pages | to_entries[] | "node\(.key)=\(.value)"] | join(" ")); steered=\(.counters.steered) prefetched=\(.counters.prefetched)",
	  (if .counters.steered == 0 and .counters.prefetched == 0 then "#   tandem.ko copied and loaded no page itself here: the pages on node 1 were allocated there when the jobs read them" else "#   tandem.ko copied \(.counters.steered) pages to node 1 and its prefetch loaded \(.counters.prefetched)" end)' <<<"$r" 2>/dev/null ||
		echo "#   $r"
	grep -a '^T headroom\|^C snap model node0' "$log" | sed 's/^/#   /'
done
ti=$(wall tiering) best='' bw=''
for c in steer prefetch-order; do
	w=$(wall "$c")
	[ -n "$w" ] || continue
	[ -n "$off" ] && [ -n "$ti" ] && awk -v c="$c" -v o="$off" -v t="$ti" -v s="$w" 'BEGIN {
		printf "%s: %.1f s against %.1f s for the default kernel (%.2fx) and %.1f s for kernel tiering (%.2fx); one run each\n",
			c, s, o, s / o, t, s / t }'
	if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN { exit !(a < b) }'; then best=$c bw=$w; fi
done
if [ -n "$off" ] && [ -n "$best" ] && [ -n "$ti" ]; then
	demo_row "$PART" "Tandem ($best): $bw s" "default: $off s; tiering: $ti s" \
		"$(awk -v o="$off" -v t="$ti" -v s="$bw" 'BEGIN { printf "%.2fx default, %.2fx tiering (1 run each)", s / o, s / t }')"
else
	demo_row "$PART" "Tandem: ${bw:--} s" "default: ${off:--} s; tiering: ${ti:--} s" "incomplete: see $out/summary.txt"
fi
echo "raw output: $out/CONFIG.1/vm/tap.log; the bench's summary: $out/summary.txt"
echo "# $(demo_load); the capacity part took $(($(date +%s) - t0)) s ($(($(date +%s) - t1)) s with the rig's lock)"
