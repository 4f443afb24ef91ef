# shellcheck shell=sh
# kmem mode, sourced by /init after the modules are loaded and before the data
# disk is mounted: turn the NVDIMM on memory-less node 1 into system RAM the
# way CXL memory is onlined (device-dax, then kmem). TAP goes to
# /tmp/vm-setup.log and the exit status to /tmp/vm-setup.status; /init
# reports them as the test "vm-setup-kmem".
(
	. /lib/ksft/ksft.sh
	. /etc/vm-setup-lib.sh
	ksft_plan 4
	if /usr/bin/ndctl create-namespace -f -e namespace0.0 -m devdax >/tmp/ndctl.out 2>&1; then
		ksft_pass "ndctl create-namespace -m devdax on namespace0.0"
	else
		sed 's/^/# /' /tmp/ndctl.out
		ksft_fail "ndctl create-namespace -m devdax on namespace0.0"
	fi
	dax_to_ram dax0.0
	check_node 1
	ksft_finish
) >/tmp/vm-setup.log 2>&1
echo $? >/tmp/vm-setup.status
