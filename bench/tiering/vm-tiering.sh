#!/bin/sh
# Inside the VM rig (busybox sh, cwd /mnt/data); started by
# bench/tiering/capacity-kmem.sh. Sets the kernel's own tiering knobs for
# KNOBS=tiering (demotion under reclaim, NUMA-balancing promotion), leaves
# them at the kernel's defaults otherwise, then runs bench/steer's capacity
# scenario (vm-capacity.sh, with CONFIG from params.sh) unchanged. Lines
# "T ..." add what the kernel's tiering did over the whole run (/proc/vmstat
# deltas, dataset generation included, for every configuration alike).
#
# One-boot mode (capacity-kmem.sh --one-boot): /extra/configs lists
# configurations that keep the knobs as booted; each runs in turn in this
# boot with its own /extra/params-NAME.sh, between "# config-begin NAME" and
# "# config-end NAME" (with its "# vm-end vm-tiering.sh STATUS" and any OOM
# kill), which the host splits into one tap.log per configuration. The
# dataset is written once, by the first; between two, tandem.ko is unloaded
# and the cache dropped (vm-capacity.sh drops it before each).
DEM=/sys/kernel/mm/numa/demotion_enabled
NB=/proc/sys/kernel/numa_balancing
if [ -z "${PARAMS:-}" ] && [ -s /extra/configs ]; then
	all=0
	# shellcheck disable=SC2013 # names, one a line
	for c in $(cat /extra/configs); do
		oom0=$(dmesg | grep -c 'Out of memory: Killed process')
		echo "# config-begin $c at $(cut -d' ' -f1 /proc/uptime) s"
		PARAMS=/extra/params-$c.sh sh "$0"
		st=$?
		dmesg | grep 'Out of memory: Killed process' | tail -n +$((oom0 + 1))
		echo "# vm-end vm-tiering.sh $st"
		echo "# config-end $c at $(cut -d' ' -f1 /proc/uptime) s"
		[ $st = 0 ] || all=1
		grep -q '^tandem ' /proc/modules && { rmmod tandem || { echo "# rmmod tandem failed: the rest not run"; exit 1; }; }
	done
	exit $all
fi
# shellcheck source=/dev/null
. "${PARAMS:-/extra/params.sh}"
if [ "$KNOBS" = tiering ]; then
	[ -n "${PARAMS:-}" ] && { echo "# one-boot mode runs no configuration that changes the knobs"; exit 1; }
	echo 1 >$DEM || exit 1
	echo 2 >$NB || exit 1
fi
echo "T knobs demotion_enabled=$(cat $DEM) numa_balancing=$(cat $NB)"
for n in /sys/devices/system/node/node*; do
	echo "T node ${n##*node} cpus='$(cat "$n/cpulist")' $(grep MemTotal "$n/meminfo" | awk '{print $3 "=" $4}')kB"
done
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	echo "T tier ${t##*memory_tier} nodes=$(cat "$t/nodelist")"
done
keys='pgdemote_kswapd|pgdemote_direct|pgpromote_success|pgpromote_candidate|numa_hint_faults|numa_pages_migrated|pgsteal_kswapd|pgsteal_direct|workingset_refault_file|pgmigrate_success'
vm() { awk -v k="^($keys)\$" '$1 ~ k { printf "%s=%s ", $1, $2 }' /proc/vmstat; }
before=$(vm)
sh /extra/vm-capacity.sh
st=$?
after=$(vm)
echo "T vmstat_delta $(echo "$before" "$after" | awk '{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] in a) printf "%s=%d ", kv[1], kv[2] - a[kv[1]]; else a[kv[1]] = kv[2] } }')"
# tandem.ko's headroom on the CPU node (Documentation/tiering.md#headroom), if loaded:
# the parameter and node 0's zones' protection against movable allocations
echo "T headroom cpu_headroom_kb=$(cat /sys/module/tandem/parameters/cpu_headroom_kb 2>/dev/null ||
	echo not-loaded) node0_protection_pages=$(awk '/^Node 0, zone/ { z = $4 }
	z && /protection:/ { gsub(/[(),]/, " "); printf "%s:%s,", z, $5; z = "" }' /proc/zoneinfo)"
exit $st
