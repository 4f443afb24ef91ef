#!/bin/sh
# CXL node auto-detection and what `tandemctl status` says about the node, in
# every rig mode (numa, kmem, cxl). Ground truth from outside tandem.ko and
# tandemctl: the dax devices' target_node, /proc/iomem's nesting of
# "System RAM (kmem)", the memory_tiering sysfs, and the cxl tool's listing.
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
S=/sys/kernel/tandem
MODE=${VM_MODE:-numa}
ksft_plan 9

# the top-level /proc/iomem entry holding "System RAM (kmem)", if any
kmem_origin() {
	awk '/^[0-9a-f]/ { top = $0; sub(/^[^:]*: /, "", top) }
	     /System RAM \(kmem\)/ { print top; exit }' /proc/iomem
}
# memory_tierT holding node $1
tier_of() {
	for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
		l=$(cat "$t/nodelist" 2>/dev/null)
		for r in $(echo "$l" | tr ',' ' '); do
			[ "$1" -ge "${r%-*}" ] && [ "$1" -le "${r#*-}" ] && { echo "${t##*memory_tier}"; return; }
		done
	done
}
# the node a kmem-onlined dax device targets, else the CPU-less memory node
expected_node() {
	for d in /sys/bus/dax/devices/*; do
		[ "$(basename "$(readlink "$d/driver" 2>/dev/null)")" = kmem ] && { cat "$d/target_node"; return; }
	done
	for n in /sys/devices/system/node/node*; do
		[ -z "$(cat "$n/cpulist")" ] && { echo "${n##*node}"; return; }
	done
}

rmmod tandem 2>/dev/null
ksft_check "loads with defaults (cxl_node=-1)" insmod "$KO"
want=$(expected_node)
ksft_expect_eq "picks node $want ($MODE mode)" "$(cat $S/cxl_node)" "$want"
reason=$(cat $S/cxl_node_reason)
ksft_diag "reason: $reason"
origin=$(kmem_origin)
case $origin in
"CXL Window"*) kind="dax/kmem memory (CXL window): lower memory tier" ;;
"Persistent Memory"*) kind="dax/kmem memory (persistent memory): lower memory tier" ;;
"") kind="(no dax/kmem node)" ;;
*) kind="dax/kmem memory (driver-managed)" ;;
esac
ksft_diag "/proc/iomem: kmem memory under '${origin:-nothing}'"
case $reason in
"auto: node $want has memory"*"$kind"*) ksft_pass "reason names the node and '$kind'" ;;
*) ksft_fail "reason names the node and '$kind'" ;;
esac
case $MODE:$origin in
numa:|kmem:Persistent\ Memory*|cxl:CXL\ Window*) ksft_pass "$MODE mode: kmem memory under '$origin'" ;;
*) ksft_fail "$MODE mode: kmem memory under '$origin'" ;;
esac

out=$(tandemctl status)
json=$(tandemctl -j status)
echo "$out" | sed 's/^/# /'
has() { echo "$out" | grep -qF "$1"; }	# text status has this line part
has_json() { echo "$json" | grep -Eq "$1"; }	# JSON status matches this ERE
ksft_check "status says which node and why" has "cxl node: $want ($reason)"

t1=$(tier_of "$want") t0=$(tier_of 0)
ksft_diag "sysfs: node 0 in memory_tier$t0, node $want in memory_tier$t1"
if [ "$MODE" = numa ]; then
	ksft_expect_eq "numa mode: node $want in node 0's tier" "$t1" "$t0"
else
	ksft_check "$MODE mode: node $want in a lower tier" [ "${t1:-0}" -gt "${t0:-0}" ]
fi
tiers_ok() {
	has_json "\"node\":$want,[^}]*\"tier\":$t1," &&
		has_json "\"memory_tiers\":\[.*\{\"tier\":$t1,\"nodes\":\[([0-9]+,)*$want[],]" &&
		has "memory_tier$t1: "
}
ksft_check "status shows node $want in memory_tier$t1" tiers_ok

case $MODE in
numa)
	ksft_check "status: no dax device behind a plain node" has "node $want memory: no device-dax instance" ;;
kmem)
	dax=$(/usr/bin/daxctl list | sed -n 's/.*"chardev":"\([^"]*\)".*/\1/p' | head -n 1)
	dax_ok() { has_json "\"cxl_node_memory\":\{\"dax\":\"$dax\",\"driver\":\"kmem\"" && has "not in a CXL region"; }
	ksft_check "status names ${dax:-?} (daxctl), kmem, no CXL region" dax_ok ;;
cxl)
	region=$(/usr/bin/cxl list -R | sed -n 's/.*"region":"\([^"]*\)".*/\1/p' | head -n 1)
	memdev=$(/usr/bin/cxl list -M | sed -n 's/.*"memdev":"\([^"]*\)".*/\1/p' | head -n 1)
	host=$(/usr/bin/cxl list -M | sed -n 's/.*"host":"\([^"]*\)".*/\1/p' | head -n 1)
	ksft_diag "cxl list: region '$region', memdev '$memdev' on '$host'"
	cxl_ok() {
		[ -n "$region" ] && [ -n "$memdev" ] &&
			has_json "\"cxl_region\":\"$region\",\"cxl_memdevs\":\"$memdev\",\"cxl_hosts\":\"$host\"" &&
			has "CXL $region on $memdev ($host)"
	}
	ksft_check "status names the CXL region and memdev (cxl list)" cxl_ok ;;
esac

echo 2 > $S/cxl_node 2>/dev/null; echo 0 > $S/cxl_node
echo -1 > $S/cxl_node
ksft_expect_eq "writing -1 detects node $want again" "$(cat $S/cxl_node)" "$want"
rmmod tandem
ksft_finish
