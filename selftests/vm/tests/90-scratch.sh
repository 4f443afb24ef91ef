#!/bin/sh
# The scratch tier on the VM's CPU-less node (Documentation/scratch.md):
# create without --node picks it (node 1 here, as tandem.ko's detection);
# the pages of a file written there are on it, from the kernel's per-node
# Shmem counters (node 1 grows by the file, node 0 does not), in 2 MiB pages
# (huge=always: ShmemHugePages grows too); drained to the
# throttled disk with the same sha256; tandem.ko unloaded right after the
# writes changes nothing (the tier does not use it); del after the drain.
# About 5 s (numa), 30 s in cxl mode (its memory is emulated, slow under TCG).
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
OUT=/mnt/data/scratch-out
ksft_plan 8

# shmem_kb NODE [FIELD]: Shmem (or FIELD) of the node's meminfo, in kB
shmem_kb() { awk -v f=" ${2:-Shmem}:" 'index($0, f) { print $4 }' /sys/devices/system/node/node$1/meminfo; }
cpuless=
for n in /sys/devices/system/node/node*; do
	[ -z "$(cat "$n/cpulist")" ] && { cpuless=${n##*node}; break; }
done
if [ -z "$cpuless" ]; then
	ksft_skip "scratch on the CPU-less node" "no CPU-less node in this VM"
	ksft_finish
fi
export TANDEM_SCRATCH_DIR=/run/tandem-test-scratch
trap 'tandemctl scratch del vmscr --force >/dev/null 2>&1' EXIT
rm -rf $OUT
mkdir -p $OUT

out=$(tandemctl -j scratch create vmscr --size 64M --drain-to $OUT)
ksft_expect_eq "create without --node picks the CPU-less node" \
	"$(echo "$out" | /usr/bin/jq -r .node)" "$cpuless"
M=$TANDEM_SCRATCH_DIR/vmscr/mnt
ksft_check "the tmpfs is bound to it (/proc/mounts: mpol=bind:$cpuless)" \
	sh -c "grep ' $M tmpfs ' /proc/mounts | grep -q 'mpol=bind:$cpuless'"

s0=$(shmem_kb 0); s1=$(shmem_kb "$cpuless"); h1=$(shmem_kb "$cpuless" ShmemHugePages)
dd if=/dev/urandom of=$M/ckpt-1 bs=1048576 count=8 2>/dev/null
d0=$(($(shmem_kb 0) - s0)); d1=$(($(shmem_kb "$cpuless") - s1))
dh=$(($(shmem_kb "$cpuless" ShmemHugePages) - h1))
ksft_diag "Shmem growth: node 0 ${d0} kB, node $cpuless ${d1} kB (in huge pages ${dh} kB)"
ksft_check "an 8 MiB file's pages are on node $cpuless (Shmem +${d1} kB >= 7.5 MiB)" test "$d1" -ge 7680
ksft_check "and not on node 0 (Shmem +${d0} kB < 1 MiB)" test "$d0" -lt 1024
# the node is fresh memory with free 2 MiB blocks: each of the file's four is one
if grep " $M tmpfs " /proc/mounts | grep -q huge=always; then
	ksft_check "in 2 MiB pages (huge=always): ShmemHugePages +${dh} kB >= 6 MiB" test "$dh" -ge 6144
else
	ksft_skip "in 2 MiB pages" "no huge=always on the mount (a kernel without THP)"
fi

# tandem.ko loaded when the next files are written, unloaded while they drain
insmod "$KO" 2>/dev/null
dd if=/dev/urandom of=$M/ckpt-2 bs=1048576 count=4 2>/dev/null
dd if=/dev/urandom of=$M/ckpt-3 bs=1048576 count=4 2>/dev/null
rmmod tandem
pend=1
for i in $(seq 300); do
	pend=$(tandemctl -j scratch show vmscr | /usr/bin/jq -r .pending_files)
	[ "$pend" = 0 ] && break
	sleep 0.1
done
ksft_expect_eq "drained to the disk within 30 s, tandem.ko unloaded meanwhile" "$pend" 0
ksft_expect_eq "every drained file's sha256 is the written one" \
	"$(cd $OUT && sha256sum ckpt-1 ckpt-2 ckpt-3)" "$(cd $M && sha256sum ckpt-1 ckpt-2 ckpt-3)"
tandemctl scratch del vmscr >/dev/null
ksft_check "del once drained: unmounted" sh -c "! grep -q ' $M ' /proc/mounts"
ksft_finish
