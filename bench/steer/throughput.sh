#!/usr/bin/env bash
# Migration throughput of a full tandem steering pass against the userspace
# baseline (mmap + move_pages(2)), same files, same kernel, same VM run.
#
#   bench/steer/throughput.sh [--rounds R] [--files N] [--size-mib M]
#                             [--node0-mb N] [--node1-mb N] [--bps B] [--out DIR]
#                             [--append ARGS] (kernel parameters, e.g. init_on_alloc=0)
#
# Boots the VM rig once (defaults: 1024 + 1024 MiB nodes, 2048 MiB disk, disk
# unthrottled since only the migration is timed) and runs vm-throughput.sh:
# N files of M MiB (default 128 x 4 MiB = 512 MiB), R rounds (default 3) of
# tandem (timed by the CLI, and by the sysfs queue) and move_pages, each from
# a cold read onto node 0. Prints per-round numbers, medians and the ratios
# tandem / move_pages; the VM's raw output stays in OUT/vm/tap.log (default
# OUT: build/bench/steer-throughput-TIME). Needs `make` (tandem.ko,
# tandemctl, build/bench/steerbench) and the rig's packages.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
rounds=3 nfiles=128 mib=4 node0=1024 node1=1024 bps=0 out= append=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift ;;
	--files) nfiles=$2; shift ;;
	--size-mib) mib=$2; shift ;;
	--node0-mb) node0=$2; shift ;;
	--node1-mb) node1=$2; shift ;;
	--bps) bps=$2; shift ;;
	--out) out=$2; shift ;;
	--append) append=$2; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "throughput.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
B=${B:-build}
sb=$top/$B/bench/steerbench
for f in "$sb" "$top/kmod/tandem.ko" "$top/$B/tandemctl"; do
	[ -e "$f" ] || { echo "throughput.sh: $f missing: run make" >&2; exit 1; }
done
out=${out:-$top/$B/bench/steer-throughput-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/files"
cp "$sb" "$out/files/"
cat >"$out/files/params.sh" <<EOF
NFILES=$nfiles
SIZE=${mib}M
ROUNDS=$rounds
EOF
cmd=(bash "$top/selftests/vm/run-vm.sh" --script "$top/bench/steer/vm-throughput.sh"
	--files "$out/files" --node0-mb "$node0" --node1-mb "$node1" --disk-mb 2048
	--bps "$bps" --timeout 1500 --vm-timeout 1600 --quiet ${append:+--append "$append"})
echo "# ${cmd[*]}" | sed "s|$top/||g" | tee "$out/command"
VM_LOGDIR=$out "${cmd[@]}" >"$out/rig.log" 2>&1 || true
tap=$out/vm/tap.log
grep -aq '^# vm-end vm-throughput.sh 0' "$tap" || {
	echo "throughput.sh: the VM script did not finish cleanly; see $tap" >&2
	tail -n 30 "$tap" >&2
	exit 1
}
python3 "$top/bench/steer/summary.py" throughput "$tap" | tee "$out/summary.txt"
