#!/usr/bin/env bash
# Boot the rig on KVER (default: the newest kernel) with multi- or
# single-threaded TCG and run tptoggle.c in it (see Documentation/testing.md,
# "Code patching under multi-threaded TCG"). Prints the oops if one came.
#   bash selftests/vm/repro/tptoggle.sh [KVER] [multi|single]
set -eu
top=$(cd "$(dirname "$0")/../../.." && pwd)
k=${1:-$(make -s -C "$top" --no-print-directory print-vm-kvers | tr ' ' '\n' | tail -n 1)}
tcg=${2:-multi}
tmp=$(mktemp -d /tmp/tandem-tptoggle-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/x"
gcc -O2 -static -o "$tmp/x/tptoggle" "$top/selftests/vm/repro/tptoggle.c"
cat >"$tmp/x/run.sh" <<'EOS'
mount -t tracefs none /sys/kernel/tracing 2>/dev/null
dd if=/dev/urandom of=/mnt/data/tpf bs=1M count=8 2>/dev/null
/extra/tptoggle 300 /mnt/data/tpf
EOS
VM_LOGDIR=$tmp/logs bash "$top/selftests/vm/run-vm.sh" --kernel "$k" --tcg "$tcg" \
	--script "$tmp/x/run.sh" --files "$tmp/x" --vm-timeout 300 --quiet || true
grep -h 'tptoggle:' "$tmp/logs/vm/tap.log" || echo "tptoggle did not finish"
grep -h -m 3 'Oops\|RIP:\|Kernel panic' "$tmp/logs/vm/console.log" || echo "no oops"
