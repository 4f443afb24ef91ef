#!/usr/bin/env bash
# The capacity scenario of bench/steer/capacity.sh (issue 4) in the rig's kmem
# mode, where node 1 is dax/kmem memory in a lower memory tier (the path real
# CXL memory takes), three ways:
#   off       the kernel's defaults (demotion off, numa_balancing as booted),
#             tandem.ko not loaded
#   tiering   the kernel's own tiering: demotion_enabled=1, numa_balancing=2
#             (demotion under reclaim, TPP-style promotion), no tandem.ko
#   prefetch  Tandem: tandem.ko steering plus `tandemctl prefetch` of the
#             dataset, kernel defaults otherwise
#
#   bench/tiering/capacity-kmem.sh [--configs off,tiering,prefetch] [--out DIR]
#       [--wait-idle] [other options of bench/steer/capacity.sh's scenario:
#       --node0-mb --node1-mb --bps --files --size-mib --model-mib --grow-mib
#       --epochs --compute]
#
# One VM boot per configuration, running bench/steer/vm-capacity.sh (reused
# unchanged) under vm-tiering.sh, which sets the knobs. --wait-idle waits
# before each boot until no qemu-system has run for 30 s (shared cores distort
# the times); the most qemu-system processes seen during each run is recorded
# in OUT/commands. Prints bench/steer/summary.py's table plus the kernel's demotion and
# promotion counters. Raw output: OUT/CONFIG/vm/tap.log (default OUT:
# build/bench/tiering-kmem-TIME).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
configs=off,tiering,prefetch node0=768 node1=1024 bps=52428800
nfiles=640 mib=1 model=520 grow=128 epochs=3 compute=10ms out= wait_idle=0
while [ $# -gt 0 ]; do
	case $1 in
	--configs) configs=$2; shift ;;
	--node0-mb) node0=$2; shift ;;
	--node1-mb) node1=$2; shift ;;
	--bps) bps=$2; shift ;;
	--files) nfiles=$2; shift ;;
	--size-mib) mib=$2; shift ;;
	--model-mib) model=$2; shift ;;
	--grow-mib) grow=$2; shift ;;
	--epochs) epochs=$2; shift ;;
	--compute) compute=$2; shift ;;
	--out) out=$2; shift ;;
	--wait-idle) wait_idle=1 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "capacity-kmem.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
B=${B:-build}
sb=$top/$B/bench/steerbench
for f in "$sb" "$top/kmod/tandem.ko" "$top/$B/tandemctl" "$top/bench/steer/vm-capacity.sh"; do
	[ -e "$f" ] || { echo "capacity-kmem.sh: $f missing: run make" >&2; exit 1; }
done
out=${out:-$top/$B/bench/tiering-kmem-$(date +%Y%m%d-%H%M%S)}
specs=()
for c in ${configs//,/ }; do
	case $c in
	off) scen=off knobs=default ;;
	tiering) scen=off knobs=tiering ;;
	steer|prefetch) scen=$c knobs=default ;;
	*) echo "capacity-kmem.sh: config off|tiering|steer|prefetch, not $c" >&2; exit 2 ;;
	esac
	mkdir -p "$out/$c/files"
	cp "$sb" "$top/bench/steer/vm-capacity.sh" "$out/$c/files/"
	# the model's memory stays fixed during the jobs and grows by --grow-mib
	# after them, default policy (bench/steer's "static" variant)
	cat >"$out/$c/files/params.sh" <<EOP
CONFIG=$scen
KNOBS=$knobs
NFILES=$nfiles
FSIZE=${mib}M
HOG_MIB=$model
GROW_MIB=$grow
GROW_AT=end
GROW_BIND=-1
EPOCHS=$epochs
COMPUTE=$compute
EOP
	cmd=(bash "$top/selftests/vm/run-vm.sh" --mode kmem --script "$top/bench/tiering/vm-tiering.sh"
		--files "$out/$c/files" --node0-mb "$node0" --node1-mb "$node1"
		--disk-mb $((nfiles * mib + 512)) --bps "$bps" --timeout 900 --vm-timeout 1000 --quiet)
	echo "# $c: ${cmd[*]}" | sed "s|$top/||g" | tee -a "$out/commands"
	# idle = no qemu-system for 30 s in a row (a rig run leaves a few seconds
	# between boots to build its image)
	quiet=0
	while [ "$wait_idle" = 1 ] && [ $quiet -lt 30 ]; do
		if pgrep qemu-system >/dev/null; then quiet=0; else quiet=$((quiet + 1)); fi
		sleep 1
	done
	echo "# $c: started $(date -u +%FT%TZ), other qemu-system processes: $(pgrep -c qemu-system || true)" | tee -a "$out/commands"
	# count other VMs during the run (sampled every 5 s) to flag distorted times
	( while sleep 5; do pgrep -c qemu-system || true; done ) >"$out/$c/others" 2>/dev/null &
	sampler=$!
	VM_LOGDIR=$out/$c "${cmd[@]}" >"$out/$c/rig.log" 2>&1 || true
	kill "$sampler" 2>/dev/null || true
	echo "# $c: most qemu-system processes seen during the run, its own included: $(sort -n "$out/$c/others" | tail -n 1)" |
		tee -a "$out/commands"
	grep -aq '^# vm-end vm-tiering.sh 0' "$out/$c/vm/tap.log" ||
		echo "capacity-kmem.sh: $c did not finish cleanly; see $out/$c/vm/tap.log" >&2
	specs+=("$c=$out/$c/vm/tap.log")
done
{
	python3 "$top/bench/steer/summary.py" capacity "${specs[@]}"
	echo
	echo "kernel tiering over the whole run (/proc/vmstat deltas) and knobs:"
	for s in "${specs[@]}"; do
		printf '  %-9s %s\n' "${s%%=*}" "$(grep -a '^T knobs ' "${s#*=}" | cut -d' ' -f3-)"
		printf '  %-9s %s\n' "" "$(grep -a '^T vmstat_delta ' "${s#*=}" | cut -d' ' -f3-)"
	done
} | tee "$out/summary.txt"
