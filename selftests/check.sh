#!/usr/bin/env bash
# make check: host tests, then VM tests; the last line is the total.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
B=${B:-build}
start=$(date +%s)
hosttests=$(make -s --no-print-directory print-host-tests)
# shellcheck disable=SC2086
bash selftests/run-host.sh $hosttests
bash selftests/vm/run-vm.sh
# the module, netlink, CLI, leak and steering tests again with node 1 as
# dax/kmem memory in a lower tier (the path real CXL memory takes), and the
# detection and migration tests on QEMU's emulated CXL device (about 70 s)
VM_LOGDIR=$top/$B/logs/vm-kmem bash selftests/vm/run-vm.sh --mode kmem --tests '[1-467]*' --quiet
VM_LOGDIR=$top/$B/logs/vm-cxl bash selftests/vm/run-vm.sh --mode cxl --tests '7*' --quiet
end=$(date +%s)
echo "# make check took $((end - start)) s (tests only, after the build)"
cat "$B/logs/host.results" "$B/logs/vm.results" "$B/logs/vm-kmem/vm.results" \
	"$B/logs/vm-cxl/vm.results" 2>/dev/null |
	awk '{p+=$1; f+=$2; s+=$3} END {printf "%d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0 || NR == 0)}'
