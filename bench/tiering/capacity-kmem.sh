#!/usr/bin/env bash
# The capacity scenario of bench/steer/capacity.sh (issue 4) in the rig's kmem
# mode, where node 1 is dax/kmem memory in a lower memory tier (the path real
# CXL memory takes), in these configurations:
#   limits    no model, no tandem.ko: the store's bandwidth (the dataset read
#             cold in name order: the disk-bound cold epoch is its bytes over
#             that) and one warm epoch of both jobs with the dataset cached
#   off       the kernel's defaults (demotion off, numa_balancing as booted),
#             tandem.ko not loaded
#   tiering   the kernel's own tiering: demotion_enabled=1, numa_balancing=2
#             (demotion under reclaim, TPP-style promotion), no tandem.ko
#   steer     Tandem: tandem.ko steering the dataset to node 1 as it is read
#   prefetch  Tandem: steering plus `tandemctl prefetch` of the dataset
#   prefetch-paced  as prefetch, the prefetch capped at --prefetch-rate MiB/s
#   prefetch-order  as prefetch, in the order the jobs first need the files
#             (their cold epoch's shuffles merged: tandemctl loadgen order)
#   learned   as prefetch-order, the order learned by `tandemctl run` from two
#             earlier runs of the jobs' first epoch, the jobs run under
#             `tandemctl run`, which prefetches by it (its default)
#   place     as steer, the jobs run with MPOL_PREFERRED node 1: their reads
#             allocate the dataset's pages on node 1, no copy (the jobs here
#             only read; a real job's own memory would follow the policy)
#   ckpt-off  as off, and job A writes a checkpoint of --ckpt every
#             --ckpt-every steps to a DRAM tmpfs (a scratch bound to node 0,
#             --ckpt-scratch in size, drained to the disk at --ckpt-rate and
#             evicted once drained): what a user without Tandem does (issue 36)
#   ckpt-dram as steer, the checkpoints to that DRAM tmpfs (issue 36's (b))
#   ckpt-cxl  as steer, the checkpoints to Tandem's scratch tier on the
#             CPU-less node, the same size, drain and rate (issue 36's (c))
#
#   bench/tiering/capacity-kmem.sh [--configs LIST] [--reps N] [--variant static|grow]
#       [--out DIR] [--touch PCT] [--step-ms MS] [--decode DUR] [--prefetch-rate MIB]
#       [--wait-idle] [--one-boot] [--node0-mb --node1-mb --bps --files --size-mib
#       --model-mib --grow-mib --epochs --compute] [--ckpt SIZE --ckpt-every K
#       --ckpt-scratch SIZE --ckpt-rate R] [--kernel KVER]
#
# Defaults: --configs limits,off,tiering,steer,prefetch --reps 3 --variant
# static; the model (steerbench hog) writes --touch 5 % of its memory every
# --step-ms 100 ms, and each job burns --decode 4ms of CPU per 1 MiB sample
# besides its --compute 10ms (a sleep). The variants are bench/steer's: static
# (520 MiB model, 128 MiB more after the jobs) and grow (400 MiB, 160 MiB
# more bound to node 0 when job A starts epoch 1). Checkpoints (ckpt-*):
# --ckpt 48M every --ckpt-every 320 steps (6 in job A's 1920), a scratch of
# --ckpt-scratch 160M (3 of them), drained at --ckpt-rate 25M (half the disk).
#
# Repetitions are interleaved: every configuration once, then again. One VM
# boot per run, running bench/steer/vm-capacity.sh under vm-tiering.sh, which
# sets the knobs. --one-boot: per repetition, the configurations that keep
# the knobs as booted run in turn in one boot (vm-tiering.sh's one-boot mode:
# the dataset written once; tandem.ko unloaded and the cache dropped between
# two), then each that changes them (tiering) in a boot of its own: a
# configuration's demotion moves the rootfs's pages to node 1 for good. Its
# TAP is split into the same OUT/CONFIG.REP/vm/tap.log (OUT/boot.REP: the
# shared boot's logs). It saves a boot and the dataset's writing (about 35 s on
# an idle 2-core machine) for every configuration after the first. Before each boot the host's CPU use over 3 s, its load and
# any other qemu-system are recorded (OUT/host.tsv); a run with another VM or
# more than 15% of the host's CPUs busy is marked "not idle" in the summary.
# --wait-idle waits before each boot until no qemu-system has run for 30 s.
# Each boot takes /tmp/tandem-vm.lock (flock), except with TANDEM_VM_LOCKED=1
# in the environment: the caller holds it for the whole run.
# Prints bench/tiering/summary.py's table (median and range per
# configuration); raw output: OUT/CONFIG.REP/vm/tap.log (default OUT:
# build/bench/tiering-kmem-TIME).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
args="$*"
configs=limits,off,tiering,steer,prefetch node0=768 node1=1024 bps=52428800
nfiles=640 mib=1 model='' grow='' epochs=3 compute=10ms out='' wait_idle=0 one_boot=0
reps=3 variant=static touch=5 step_ms=100 decode=4ms prate=20
ck=48M ck_every=320 ck_scr=160M ck_rate=25M kver=
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
	--one-boot) one_boot=1 ;;
	--reps) reps=$2; shift ;;
	--variant) variant=$2; shift ;;
	--touch) touch=$2; shift ;;
	--step-ms) step_ms=$2; shift ;;
	--decode) decode=$2; shift ;;
	--prefetch-rate) prate=$2; shift ;;
	--ckpt) ck=$2; shift ;;
	--ckpt-every) ck_every=$2; shift ;;
	--ckpt-scratch) ck_scr=$2; shift ;;
	--ckpt-rate) ck_rate=$2; shift ;;
	--kernel) kver=$2; shift ;;	# run-vm.sh's: another kernel than Debian 12's own
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
case $variant in
static) grow_at=end grow_bind=-1 model=${model:-520} grow=${grow:-128} ;;
grow) grow_at=1 grow_bind=0 model=${model:-400} grow=${grow:-160} ;;
*) echo "capacity-kmem.sh: --variant static|grow" >&2; exit 2 ;;
esac
scenario() { # CONFIG: vm-capacity.sh's CONFIG and vm-tiering.sh's KNOBS for it
	case $1 in
	limits|off|steer|prefetch|place) echo "$1 default" ;;
	tiering) echo "off tiering" ;;
	prefetch-paced|prefetch-order|learned) echo "prefetch default" ;;
	ckpt-off) echo "off default" ;;
	ckpt-dram|ckpt-cxl) echo "steer default" ;;
	*) echo "capacity-kmem.sh: config limits|off|tiering|steer|prefetch|prefetch-paced|prefetch-order|learned|place|ckpt-off|ckpt-dram|ckpt-cxl, not $1" >&2; return 2 ;;
	esac
}
ck_disk=0	# MiB more on the disk for the drained checkpoints
for c in ${configs//,/ }; do
	scenario "$c" >/dev/null || exit 2
	case $c in ckpt-*) ck_disk=512 ;; esac
done
out=${out:-$top/$B/bench/tiering-kmem-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
echo "# $(date -u +%FT%TZ) commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null)$(git -C "$top" diff --quiet 2>/dev/null || echo +changes): $0 $args" |
	sed "s|$top/||g" >>"$out/commands"
printf 'run\tstarted\thost_busy_pct\tload1\tother_qemu_before\tmost_qemu_during\n' >"$out/host.tsv"
busy3() { # the host's CPU busy share over 3 s, /proc/stat
	local a b
	a=$(head -n 1 /proc/stat); sleep 3; b=$(head -n 1 /proc/stat)
	echo "$a" "$b" | awk '{ n = (NF - 2) / 2; for (i = 2; i <= n + 1; i++) { d = $(i + n + 1) - $i; t += d; if (i == 5 || i == 6) idle += d }
		printf "%.1f", t ? 100 * (t - idle) / t : 0 }'
}
params() { # CONFIG: params.sh for CONFIG
	local scen knobs
	read -r scen knobs < <(scenario "$1")
	cat <<EOP
CONFIG=$scen
KNOBS=$knobs
NFILES=$nfiles
FSIZE=${mib}M
HOG_MIB=$model
GROW_MIB=$grow
GROW_AT=$grow_at
GROW_BIND=$grow_bind
EPOCHS=$epochs
COMPUTE=$compute
TOUCH_PCT=$touch
STEP_MS=$step_ms
DECODE=$decode
EOP
	[ "$1" = prefetch-paced ] && echo "PREFETCH_RATE=$prate"
	[ "$1" = prefetch-order ] && echo "PREFETCH_ORDER=jobs"
	[ "$1" = learned ] && echo "PREFETCH_ORDER=learned"
	case $1 in
	ckpt-*) [ "$1" = ckpt-cxl ] && echo "CKPT=cxl" || echo "CKPT=node0"
		printf 'CKSIZE=%s\nCKEVERY=%s\nCKSCR=%s\nCKRATE=%s\n' "$ck" "$ck_every" "$ck_scr" "$ck_rate" ;;
	esac
	return 0
}
boot() { # NAME NCONFIGS: one VM boot of OUT/NAME/files (logs in OUT/NAME); $hostrow: host.tsv's fields
	local r=$1 n=$2 busy load others started sampler cmd
	cp "$sb" "$top/bench/steer/vm-capacity.sh" "$out/$r/files/"
	cmd=(bash "$top/selftests/vm/run-vm.sh" --mode kmem --script "$top/bench/tiering/vm-tiering.sh"
		--files "$out/$r/files" --node0-mb "$node0" --node1-mb "$node1"
		--disk-mb $((nfiles * mib + 512 + ck_disk)) --bps "$bps" --timeout $((900 * n)) --vm-timeout $((900 * n + 100)) --quiet
		${kver:+--kernel "$kver"})
	echo "# $r: ${cmd[*]}" | sed "s|$top/||g" >>"$out/commands"
	quiet=0
	while [ "$wait_idle" = 1 ] && [ $quiet -lt 30 ]; do
		if pgrep qemu-system >/dev/null; then quiet=0; else quiet=$((quiet + 1)); fi
		sleep 1
	done
	busy=$(busy3)
	load=$(cut -d' ' -f1 /proc/loadavg)
	others=$(pgrep -c qemu-system || true)
	started=$(date -u +%FT%TZ)
	echo "# $r: started $started, host CPU busy $busy%, load $load, other qemu-system: $others"
	( while sleep 5; do pgrep -c qemu-system || true; done ) >"$out/$r/others" 2>/dev/null &
	sampler=$!
	# one VM at a time on this machine: the rig lock for this boot only, unless
	# the caller holds it for all of them (TANDEM_VM_LOCKED=1: scripts/demo-capacity.sh)
	if [ "${TANDEM_VM_LOCKED:-0}" = 1 ]; then
		VM_LOGDIR=$out/$r "${cmd[@]}" >"$out/$r/rig.log" 2>&1 || true
	else
		VM_LOGDIR=$out/$r flock /tmp/tandem-vm.lock "${cmd[@]}" >"$out/$r/rig.log" 2>&1 || true
	fi
	kill "$sampler" 2>/dev/null || true
	hostrow=$(printf '%s\t%s\t%s\t%s\t%s' "$started" "$busy" "$load" "$others" "$(sort -n "$out/$r/others" | tail -n 1)")
}
finished() { # RUN: host.tsv's row, a warning when its TAP has no clean end
	printf '%s\t%s\n' "$1" "$hostrow" >>"$out/host.tsv"
	grep -aq '^# vm-end vm-tiering.sh 0' "$out/$1/vm/tap.log" 2>/dev/null ||
		echo "capacity-kmem.sh: $1 did not finish cleanly; see $out/$1/vm/tap.log" >&2
	runs+=("$1=$out/$1/vm/tap.log")
}
one() { # CONFIG REP: CONFIG in a boot of its own
	local r=$1.$2
	mkdir -p "$out/$r/files"
	params "$1" >"$out/$r/files/params.sh"
	boot "$r" 1
	finished "$r"
}
shared() { # REP CONFIG...: the configurations in one boot, its TAP split per configuration
	local rep=$1 r=boot.$1 c
	shift
	mkdir -p "$out/$r/files"
	printf '%s\n' "$@" >"$out/$r/files/configs"
	for c in "$@"; do params "$c" >"$out/$r/files/params-$c.sh"; done
	boot "$r" $#
	for c in "$@"; do
		mkdir -p "$out/$c.$rep/vm"
		# the rig's header, then this configuration's section
		{ sed -n '/^# vm-begin vm-tiering.sh/q; p' "$out/$r/vm/tap.log"
		  sed -n "/^# config-begin $c /,/^# config-end $c /p" "$out/$r/vm/tap.log"; } >"$out/$c.$rep/vm/tap.log" 2>/dev/null
		finished "$c.$rep"
	done
}
runs=()
for rep in $(seq 1 "$reps"); do
	if [ "$one_boot" = 1 ]; then
		same=() own=()
		for c in ${configs//,/ }; do
			read -r _ knobs < <(scenario "$c")
			if [ "$knobs" = default ]; then same+=("$c"); else own+=("$c"); fi
		done
		[ ${#same[@]} = 0 ] || shared "$rep" "${same[@]}"
		for c in "${own[@]}"; do one "$c" "$rep"; done
		continue
	fi
	for c in ${configs//,/ }; do one "$c" "$rep"; done
done
python3 "$top/bench/tiering/summary.py" --host "$out/host.tsv" "${runs[@]}" | tee "$out/summary.txt"
