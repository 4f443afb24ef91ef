#!/usr/bin/env bash
# The checkpoint stall on this host's own memory (no VM, no CXL node): the
# loadgen job of bench/scratch/checkpoint.sh on a dataset in /var/tmp, with
# checkpoints to nothing (none), to a scratch on node 0 drained to /var/tmp
# (scratch0: tmpfs mpol=bind:0,huge=always, create --pages huge, and the
# drainer), to the same with small pages (scratch0s: the default on a node
# with CPUs), and to a plain tmpfs bound to
# node 0 without a drainer (plain; plainhuge: with huge=always). Real
# hardware's ratio of a tmpfs write to an in-memory copy, which TCG in the VM
# rig distorts. Root (mount).
#   bench/scratch/host-tmpfs.sh [REPS] >RAW; bench/scratch/summary.py RAW
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
T=$top/build/tandemctl
reps=${1:-3}
W=$(mktemp -d /var/tmp/tandem-hckpt-XXXXXX)
export TANDEM_SCRATCH_DIR=$W/state TANDEM_SCRATCH_RECORD_DIR=$W/record
trap '"$T" scratch del hck --force >/dev/null 2>&1 || true; "$T" scratch del hcks --force >/dev/null 2>&1 || true
	umount "$W/plain" 2>/dev/null || true; rm -rf "$W"' EXIT
mkdir -p "$W/dst" "$W/dsts" "$W/plain"
"$T" loadgen gen "$W/ds" --files 80 --size 1M >/dev/null
"$T" scratch create hck --node 0 --size 1G --drain-to "$W/dst" --rate 200M --evict-drained \
	--pages huge >/dev/null
"$T" scratch create hcks --node 0 --size 1G --drain-to "$W/dsts" --rate 200M --evict-drained \
	--pages small >/dev/null
M=$TANDEM_SCRATCH_DIR/hck/mnt
Ms=$TANDEM_SCRATCH_DIR/hcks/mnt
echo "E host $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), other qemu-system: $(pgrep -c qemu-system || true)"
ck=(--checkpoint-size 96M --checkpoint-every 40)
for rep in $(seq "$reps"); do
	for c in none scratch0 scratch0s plain plainhuge; do
		case $c in
		none) a=() ;;
		scratch0) a=(--checkpoint-dir "$M" "${ck[@]}") ;;
		scratch0s) a=(--checkpoint-dir "$Ms" "${ck[@]}") ;;
		plain) mount -t tmpfs -o size=1G,mpol=bind:0 none "$W/plain"
			a=(--checkpoint-dir "$W/plain" "${ck[@]}") ;;
		plainhuge) mount -t tmpfs -o size=1G,mpol=bind:0,huge=always none "$W/plain"
			a=(--checkpoint-dir "$W/plain" "${ck[@]}") ;;
		esac
		"$T" -j loadgen "$W/ds" --epochs 2 --compute 50ms --threads 2 "${a[@]}" |
			jq -r --arg c $c --arg r "$rep" '"R case=\($c) rep=\($r) total_s=\(.total_s) n=\(.checkpoint_count // 0) measure_s=\(.checkpoint_measure_s // 0) after_s=0",
			(.checkpoints // [] | .[] | "C case=\($c) rep=\($r) step=\(.step) stall_s=\(.stall_s) copy_s=\(.copy_s) copy_new_s=\(.copy_new_s)")'
		case $c in plain*) umount "$W/plain" ;; esac
	done
done
echo "E end load $(cut -d' ' -f1-3 /proc/loadavg), other qemu-system: $(pgrep -c qemu-system || true)"
