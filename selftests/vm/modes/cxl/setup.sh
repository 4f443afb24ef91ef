# shellcheck shell=sh
# cxl mode, sourced by /init after the modules are loaded and before the data
# disk is mounted: assemble a region on QEMU's CXL type-3 device (persistent
# memory only in QEMU 7.2), expose it as device-dax and online it as system
# RAM, the path real CXL memory expanders take. TAP goes to
# /tmp/vm-setup.log and the exit status to /tmp/vm-setup.status; /init
# reports them as the test "vm-setup-cxl".
(
	. /lib/ksft/ksft.sh
	. /etc/vm-setup-lib.sh
	ksft_plan 5
	if /usr/bin/cxl create-region -m -d decoder0.0 -w 1 -t pmem mem0 >/tmp/cxl.out 2>&1; then
		ksft_pass "cxl create-region: $(sed -n 's/.*"region":"\([^"]*\)".*/\1/p' /tmp/cxl.out | head -n 1) on mem0"
	else
		sed 's/^/# /' /tmp/cxl.out
		ksft_fail "cxl create-region on mem0"
	fi
	r=$(ls /sys/bus/nd/devices 2>/dev/null | grep '^region' | head -n 1)
	if /usr/bin/ndctl create-namespace -m devdax -r "${r:-region0}" >/tmp/ndctl.out 2>&1; then
		ksft_pass "ndctl create-namespace -m devdax on $r"
	else
		sed 's/^/# /' /tmp/ndctl.out
		ksft_fail "ndctl create-namespace -m devdax on ${r:-(no nd region)}"
	fi
	d=$(ls /sys/bus/dax/devices 2>/dev/null | head -n 1)
	dax_to_ram "${d:-dax0.0}"
	check_node 1
	ksft_finish
) >/tmp/vm-setup.log 2>&1
echo $? >/tmp/vm-setup.status
