#!/usr/bin/env bash
# Checkpoint stalls (issue 36) in the VM rig (kmem mode unless --mode): one loadgen job
# reading a cold dataset from the throttled disk, checkpointing CKSIZE every
# EVERY steps, in four cases (bench/scratch/vm-checkpoint.sh): none (no
# checkpoints), disk (straight to the disk), dram (a DRAM tmpfs scratch,
# drained to the disk) and cxl (Tandem's scratch on the CPU-less node, drained
# to the disk), and with --cases also cxl4k (cxl with scratch create --pages
# small) and dramhuge (dram with --pages huge); REPS repetitions in one VM boot, the cases' order rotated per
# repetition. Not part of make check.
#
#   bench/scratch/checkpoint.sh [--reps N] [--files N] [--size-mib M] [--epochs E]
#       [--compute DUR] [--ckpt SIZE] [--every K] [--rate R] [--scratch SIZE]
#       [--bps B] [--node0-mb M] [--node1-mb M] [--kernel KVER] [--mode kmem|cxl]
#       [--cases 'none disk dram cxl cxl4k dramhuge'] [--out DIR]
#
# --kernel and --mode go to selftests/vm/run-vm.sh (default: its default
# kernel, kmem). In cxl mode node 1 is QEMU's emulated CXL type-3 memory: the
# scratch lives there and only the CPU copies into and out of it (the disk's
# DMA goes to node 0's page cache: the rig's cxl mode hangs on DMA into it).
#
# Before the boot the host's load and any other qemu-system are recorded
# (OUT/host.txt), and every 5 s during it (OUT/others). Prints
# bench/scratch/summary.py's table; raw output OUT/vm/vm/tap.log (default OUT:
# build/bench/scratch-TIME).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
args="$*"
reps=3 nfiles=80 mib=1 epochs=2 compute=50ms ck=96M every=40 rate=25M scr=400M
bps=52428800 node0=768 node1=1024 out='' kver='' mode=kmem cases='none disk dram cxl'
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift ;;
	--files) nfiles=$2; shift ;;
	--size-mib) mib=$2; shift ;;
	--epochs) epochs=$2; shift ;;
	--compute) compute=$2; shift ;;
	--ckpt) ck=$2; shift ;;
	--every) every=$2; shift ;;
	--rate) rate=$2; shift ;;
	--scratch) scr=$2; shift ;;
	--bps) bps=$2; shift ;;
	--node0-mb) node0=$2; shift ;;
	--node1-mb) node1=$2; shift ;;
	--out) out=$2; shift ;;
	--kernel) kver=$2; shift ;;
	--mode) mode=$2; shift ;;
	--cases) cases=$2; shift ;;
	*) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
	shift
done
out=${out:-$top/build/bench/scratch-$(date +%Y%m%d-%H%M%S)}
case $mode in kmem|cxl) ;; *) echo "checkpoint.sh: --mode kmem|cxl, not '$mode'" >&2; exit 2 ;; esac
mkdir -p "$out/files"
cp "$top/bench/scratch/vm-checkpoint.sh" "$out/files/"
cat >"$out/files/params.sh" <<EOP
REPS=$reps
NFILES=$nfiles
FSIZE=${mib}M
EPOCHS=$epochs
COMPUTE=$compute
CKSIZE=$ck
EVERY=$every
RATE=$rate
SCRSIZE=$scr
BPS=$bps
CASES='$cases'
EOP
echo "bench/scratch/checkpoint.sh $args" >"$out/commands"
cmd=(bash "$top/selftests/vm/run-vm.sh" --mode "$mode" ${kver:+--kernel "$kver"} --script "$top/bench/scratch/vm-checkpoint.sh"
	--files "$out/files" --node0-mb "$node0" --node1-mb "$node1"
	--disk-mb $((nfiles * mib + 1536)) --bps "$bps" --timeout 1500 --vm-timeout 1600 --quiet)
echo "${cmd[*]}" | sed "s|$top/||g" >>"$out/commands"
{
	echo "started $(date -u '+%F %T') UTC, load $(cut -d' ' -f1-3 /proc/loadavg), nproc $(nproc)"
	echo "other qemu-system before: $(pgrep -c qemu-system || true)"
	pgrep -a qemu-system | cut -c1-160 || true
} >"$out/host.txt"
( while sleep 5; do echo "$(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg) qemu $(pgrep -c qemu-system || true)"; done ) >"$out/others" 2>/dev/null &
mon=$!
st=0
VM_LOGDIR=$out/vm "${cmd[@]}" || st=$?
kill "$mon" 2>/dev/null || true
echo "ended $(date -u '+%F %T') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/host.txt"
python3 "$top/bench/scratch/summary.py" "$out/vm/vm/tap.log" | tee "$out/summary.txt"
exit $st
