#!/usr/bin/env bash
# make check: host tests, then VM tests on every kernel the rig can boot
# (an image in /boot and headers: make vm-modules built tandem.ko for each);
# the last line is the total.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
B=${B:-build}
start=$(date +%s)
hosttests=$(make -s --no-print-directory print-host-tests)
kernels=$(make -s --no-print-directory print-vm-kvers)
newest=$(echo "$kernels" | tr ' ' '\n' | tail -n 1)
oldest=$(echo "$kernels" | tr ' ' '\n' | head -n 1)
results=("$B/logs/host.results")
# the host tests parallel.txt names, one per CPU at a time; the rest alone
# shellcheck disable=SC2086
HOST_JOBS=${HOST_JOBS:-$(nproc)} bash selftests/run-host.sh $hosttests
first=1
for k in $kernels; do
	# the first (oldest, Debian 12's own) kernel's logs keep their old places
	tag=-$(echo "$k" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
	[ $first -eq 1 ] && tag=''
	quiet=--quiet
	[ $first -eq 1 ] && quiet=''
	first=0
	# The lifetime test (the module unloaded while readers add and remove
	# page-cache folios) and the tracker tests (BPF attached and detached,
	# kprobes included, under reads and faults) run in a boot of their own
	# with single-threaded TCG: under QEMU 7.2's multi-threaded TCG, 6.12
	# takes an int3 oops in __filemap_remove_folio when a tracepoint's
	# static key is patched while another vCPU runs the site, with no Tandem
	# code loaded (switching the filemap events on and off in tracefs under
	# reads; testing.md), and once jumped to 0 from finish_fault in
	# 50-tracker's kprobe case. 6.1 too since 2026-12-04: both vCPUs stuck
	# in the int3 at __filemap_add_folio's tracepoint during an unload in
	# 45-lifetime (soft lockups until the VM's timeout), and on 2026-12-06
	# in 90-scratch's unload while its drainer writes. So the tests that
	# unload tandem.ko under page-cache traffic (45-lifetime, 90-scratch,
	# 91-scratch-reset: the scratch's reset mid-drain, a second boot on the
	# same disk, oldest kernel only) run there too.
	lifetests='45-*,5*,90-*,91-*' skip='45-*,5*,90-*,91-*'
	[ -z "$tag" ] || lifetests='45-*,5*,90-*'
	# the repeated-run plan test (81-plan) measures the model, not the
	# kernel, and 80-run tests run/calibrate's orchestration (40 s), whose
	# module paths (registration, steering, prefetch, the tracker) 20-*,
	# 30-*, 5* and 6* test on every kernel: on the oldest kernel only, to
	# keep make check in time
	[ -z "$tag" ] || skip="$skip,80-*,81-*"
	if [ -z "$tag" ]; then	# build/logs/vm/ and build/logs/vm.results, as before
		bash selftests/vm/run-vm.sh --kernel "$k" --skip "$skip" $quiet
		results+=("$B/logs/vm.results")
	else
		VM_LOGDIR=$top/$B/logs/vm$tag bash selftests/vm/run-vm.sh --kernel "$k" \
			--skip "$skip" $quiet
		results+=("$B/logs/vm$tag/vm.results")
	fi
	if [ -n "$skip" ]; then	# what the main boot left out, single-threaded
		VM_LOGDIR=$top/$B/logs/vm-life$tag bash selftests/vm/run-vm.sh --kernel "$k" \
			--tests "$lifetests" --tcg single --quiet
		results+=("$B/logs/vm-life$tag/vm.results")
	fi
	# the module, netlink and steering tests again with node 1 as dax/kmem
	# memory in a lower tier (the path real CXL memory takes); not the CLI,
	# leak, fuzzer, ynl and lifetime tests, which do not depend on the memory
	# (about 70 s less on the two kernels, to keep make check under 25 min)
	# (on later kernels the steering and node tests only: loading, sysfs and
	# netlink do not depend on the memory, and the oldest kernel's kmem boot
	# has them)
	kmemtests='1*,20-*,6*,7*'
	[ -z "$tag" ] || kmemtests='6*,7*'
	VM_LOGDIR=$top/$B/logs/vm-kmem$tag bash selftests/vm/run-vm.sh --kernel "$k" --mode kmem \
		--tests "$kmemtests" --quiet
	results+=("$B/logs/vm-kmem$tag/vm.results")
done
# detection and migration on QEMU's emulated CXL device (about 20 s a boot),
# on the oldest and the newest kernel; steering with large folios on an XFS
# data disk, on the newest
VM_LOGDIR=$top/$B/logs/vm-cxl bash selftests/vm/run-vm.sh --mode cxl --tests '7*' --quiet
results+=("$B/logs/vm-cxl/vm.results")
if [ "$newest" != "$oldest" ]; then
	VM_LOGDIR=$top/$B/logs/vm-cxl-new bash selftests/vm/run-vm.sh --kernel "$newest" --mode cxl \
		--tests '7*' --quiet
	results+=("$B/logs/vm-cxl-new/vm.results")
fi
VM_LOGDIR=$top/$B/logs/vm-xfs bash selftests/vm/run-vm.sh --kernel "$newest" --fs xfs \
	--tests '51-*,6[0-2]-*' --quiet
results+=("$B/logs/vm-xfs/vm.results")
end=$(date +%s)
echo "# make check took $((end - start)) s (tests only, after the build)"
cat "${results[@]}" 2>/dev/null |
	awk '{p+=$1; f+=$2; s+=$3} END {printf "%d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0 || NR == 0)}'
