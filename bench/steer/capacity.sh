#!/usr/bin/env bash
# The DeepMemoryDL capacity scenario: a small DRAM node mostly held by the
# model, a larger CPU-less (CXL) node, a dataset larger than the DRAM left
# free, two jobs reading it for several epochs from the throttled disk;
# without tandem.ko, with steering, and with steering + prefetch.
#
#   bench/steer/capacity.sh [--configs off,steer,prefetch] [--variant static|grow]
#       [--node0-mb N] [--node1-mb N] [--bps B] [--files N] [--size-mib M]
#       [--model-mib M] [--grow-mib M] [--epochs E] [--compute DUR] [--repeat N]
#       [--out DIR]
#
# One VM boot per configuration (a fresh disk and memory each time), running
# vm-capacity.sh; with --repeat N the configurations take turns N times.
# Configurations: off, steer, prefetch, and prefetch:R (prefetch capped at
# R MiB/s). Defaults: node 0 768 MiB, node 1 1024 MiB, disk 50 MiB/s, 640
# files of 1 MiB, 3 epochs, 10ms of compute per file.
# Variants:
#   static  a 520 MiB model, fixed during the jobs; after them it asks for
#           128 MiB more with the default policy (where does that land?)
#   grow    a 400 MiB model that takes 160 MiB more, bound to node 0 (as a
#           framework binding to local DRAM does), when job A starts its
#           second epoch (520 + 128 bound would not fit: the OOM killer)
# Prints per configuration: MiB read from the disk (/proc/diskstats), each
# job's epoch times, per-node memory at the end, the model's placement.
# Raw output: OUT/CONFIG/vm/tap.log (default OUT: build/bench/steer-capacity-TIME).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
configs=off,steer,prefetch variant=static node0=768 node1=1024 bps=52428800
nfiles=640 mib=1 model='' grow='' epochs=3 compute=10ms repeat=1 out=
while [ $# -gt 0 ]; do
	case $1 in
	--configs) configs=$2; shift ;;
	--variant) variant=$2; shift ;;
	--node0-mb) node0=$2; shift ;;
	--node1-mb) node1=$2; shift ;;
	--bps) bps=$2; shift ;;
	--files) nfiles=$2; shift ;;
	--size-mib) mib=$2; shift ;;
	--model-mib) model=$2; shift ;;
	--grow-mib) grow=$2; shift ;;
	--epochs) epochs=$2; shift ;;
	--repeat) repeat=$2; shift ;;
	--compute) compute=$2; shift ;;
	--out) out=$2; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "capacity.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
case $variant in
static) grow_at=end grow_bind=-1 model=${model:-520} grow=${grow:-128} ;;
grow) grow_at=1 grow_bind=0 model=${model:-400} grow=${grow:-160} ;;
*) echo "capacity.sh: --variant static|grow" >&2; exit 2 ;;
esac
B=${B:-build}
sb=$top/$B/bench/steerbench
for f in "$sb" "$top/kmod/tandem.ko" "$top/$B/tandemctl"; do
	[ -e "$f" ] || { echo "capacity.sh: $f missing: run make" >&2; exit 1; }
done
out=${out:-$top/$B/bench/steer-capacity-$(date +%Y%m%d-%H%M%S)}
specs=()
for k in $(seq 1 "$repeat"); do
	for cr in ${configs//,/ }; do
		c=${cr%%:*} rate=
		[ "$c" != "$cr" ] && rate=${cr#*:}
		run=$c${rate:+-$rate}
		[ "$repeat" -gt 1 ] && run=$run.$k
		mkdir -p "$out/$run/files"
		cp "$sb" "$out/$run/files/"
		cat >"$out/$run/files/params.sh" <<EOF
CONFIG=$c
PREFETCH_RATE=$rate
NFILES=$nfiles
FSIZE=${mib}M
HOG_MIB=$model
GROW_MIB=$grow
GROW_AT=$grow_at
GROW_BIND=$grow_bind
EPOCHS=$epochs
COMPUTE=$compute
EOF
		cmd=(bash "$top/selftests/vm/run-vm.sh" --script "$top/bench/steer/vm-capacity.sh"
			--files "$out/$run/files" --node0-mb "$node0" --node1-mb "$node1"
			--disk-mb $((nfiles * mib + 512)) --bps "$bps" --timeout 900 --vm-timeout 1000 --quiet)
		echo "# $run: ${cmd[*]}" | sed "s|$top/||g" | tee -a "$out/commands"
		VM_LOGDIR=$out/$run "${cmd[@]}" >"$out/$run/rig.log" 2>&1 || true
		grep -aq '^# vm-end vm-capacity.sh 0' "$out/$run/vm/tap.log" ||
			echo "capacity.sh: $run did not finish cleanly; see $out/$run/vm/tap.log" >&2
		specs+=("$run=$out/$run/vm/tap.log")
	done
done
python3 "$top/bench/steer/summary.py" capacity "${specs[@]}" | tee "$out/summary.txt"
