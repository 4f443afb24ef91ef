# shellcheck shell=sh
# Shared by the kmem and cxl mode setups (copied to /etc/vm-setup-lib.sh):
# online a device-dax instance as system RAM and check that it became a
# CPU-less node in a lower memory tier than node 0. TAP, via ksft.sh.

# in_list N LIST: is N in a sysfs node list such as "0-1,3"?
in_list() {
	for r in $(echo "$2" | tr ',' ' '); do
		lo=${r%-*} hi=${r#*-}
		[ "$1" -ge "$lo" ] && [ "$1" -le "$hi" ] && return 0
	done
	return 1
}

# tier_of N: the memory tier id holding node N (memory_tierT), or nothing
tier_of() {
	for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
		[ -r "$t/nodelist" ] || continue
		if in_list "$1" "$(cat "$t/nodelist")"; then echo "${t##*memory_tier}"; return; fi
	done
}

# dax_to_ram DAXDEV: reconfigure it as system RAM (kmem), online movable, the
# default of daxctl and of CXL memory on distributions
dax_to_ram() {
	# Debian's 6.12 onlines hot-added memory itself (auto_online_blocks
	# "online"), which daxctl refuses ("kernel policy will auto-online
	# memory, aborting"): leave it offline so daxctl onlines it movable,
	# as on 6.1
	[ -w /sys/devices/system/memory/auto_online_blocks ] &&
		echo offline >/sys/devices/system/memory/auto_online_blocks
	if /usr/bin/daxctl reconfigure-device --mode=system-ram "$1" >/tmp/daxctl.out 2>&1; then
		ksft_pass "daxctl reconfigure-device --mode=system-ram $1"
	else
		sed 's/^/# /' /tmp/daxctl.out
		ksft_fail "daxctl reconfigure-device --mode=system-ram $1"
	fi
}

# check_node N: N has memory, no CPUs, and sits below node 0 in the tiers
check_node() {
	m=$(awk '/MemTotal/ {print $4}' "/sys/devices/system/node/node$1/meminfo" 2>/dev/null)
	c=$(cat "/sys/devices/system/node/node$1/cpulist" 2>/dev/null)
	if [ "${m:-0}" -gt 0 ] && [ -z "$c" ]; then
		ksft_pass "node $1 online: $((m / 1024)) MiB, no CPUs"
	else
		ksft_fail "node $1 online with memory and no CPUs (MemTotal '${m:-}' kB, cpus '$c')"
	fi
	t0=$(tier_of 0) t1=$(tier_of "$1")
	if [ -n "$t0" ] && [ -n "$t1" ] && [ "$t1" -gt "$t0" ]; then
		ksft_pass "node $1 in memory_tier$t1, below node 0 (memory_tier$t0)"
	else
		ksft_fail "node $1 in a lower memory tier than node 0 (tiers '$t0' and '$t1')"
	fi
}
