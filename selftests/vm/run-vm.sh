#!/usr/bin/env bash
# Boot Debian's kernel under QEMU TCG with tandem.ko, tandemctl and the tests;
# node 0 has the CPUs, node 1 memory only (how a CXL expander appears); a
# virtio disk with ext4, throttled, stands for the remote dataset store.
#
#   run-vm.sh [options]
#     --node0-mb N     memory of node 0 (CPUs), default 384
#     --node1-mb N     memory of node 1 (no CPUs), default 256
#     --disk-mb N      size of the data disk, default 2048
#     --bps N          disk throttle, bytes/s total (0 = none), default 52428800
#     --smp N          vCPUs, default 2
#     --timeout S      per-test timeout inside the VM, default 300
#     --vm-timeout S   whole-VM wall-clock limit, default 1500
#     --tests GLOB     run only tests whose file name matches GLOB (or one of
#                      several globs separated by commas)
#     --skip GLOB      leave out tests whose file name matches GLOB (commas too)
#     --tcg MODE       QEMU's TCG threads: multi (one host thread per vCPU,
#                      default) or single (the vCPUs take turns on one thread:
#                      slower, but code the guest kernel patches while another
#                      vCPU runs it is seen coherently; see testing.md)
#     --script FILE    run FILE (sh, in /mnt/data) instead of the tests
#     --files DIR      copy DIR's contents to /extra in the VM
#     --mode MODE      how node 1's memory reaches the guest (VM_MODE there):
#                      numa  a plain CPU-less node, same memory tier as DRAM
#                            (default)
#                      kmem  an NVDIMM on a memory-less node 1, onlined as
#                            system RAM by ndctl/daxctl (dax/kmem, a lower
#                            memory tier, RAM speed)
#                      cxl   QEMU's emulated CXL type-3 device, onlined by
#                            cxl/ndctl/daxctl (slow: discovery and migration
#                            tests only; disk DMA into it hangs the guest)
#                      Per-mode files: selftests/vm/modes/MODE/{modules.txt,
#                      extra-bins.txt,setup.sh}
#     --kernel KVER    boot /boot/vmlinuz-KVER with $B/kmod/KVER/tandem.ko
#                      (make module KVER=..., make vm-modules); default: $KVER,
#                      else the oldest -amd64 kernel in /boot (Debian 12's own).
#                      The rig refuses a module whose vermagic names another
#                      kernel. Results of a kernel other than the default carry
#                      "@MAJOR.MINOR" (and tests see $VM_KERNEL)
#     --fs FS          data disk filesystem: ext4 (default) or xfs (Debian's
#                      xfsprogs; tests see $DATA_FS; results carry "@xfs")
#     --append ARGS    more kernel command-line parameters
# The host's root is shared read-only (9p) at /host in the VM.
#     --quiet          do not stream the TAP to stdout
# A test may reset the VM on purpose (a crash test): it prints "# vm-reset
# NAME" (its file name) and resets it (sysrq b); -no-reboot ends QEMU. The VM
# is then booted again on the same data disk with tandem.resume=NAME: init
# runs NAME again with VM_RESUMED=1 and the tests after it (at most 3 resets
# a run; tap.log keeps every boot's TAP in order).
# Exit status: 0 when every test passed or skipped, the VM finished, and
# dmesg showed no oops/warning; 1 otherwise. Results per test program go to
# build/logs/vm.results ("PASS FAIL SKIP NAME"), logs to build/logs/vm/
# (VM_LOGDIR=DIR puts both under DIR instead).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/results.sh"
B=${B:-build}
# the default kernel: the oldest -amd64 image, Debian 12's own 6.1 here
kdefault=$(ls -1 /boot 2>/dev/null | sed -n 's/^vmlinuz-\(.*-amd64\)$/\1/p' | sort -V | head -n 1)
KVER=${KVER:-$kdefault}
node0=384 node1=256 disk=2048 bps=52428800 smp=2 ttimeout=300 vmtimeout=1500
tests='*' skip='' tcg=multi script='' files='' mode=numa quiet=0 fs=ext4 extra_append=''
while [ $# -gt 0 ]; do
	case $1 in
	--node0-mb) node0=$2; shift ;;
	--node1-mb) node1=$2; shift ;;
	--disk-mb) disk=$2; shift ;;
	--bps) bps=$2; shift ;;
	--smp) smp=$2; shift ;;
	--timeout) ttimeout=$2; shift ;;
	--vm-timeout) vmtimeout=$2; shift ;;
	--tests) tests=$2; shift ;;
	--skip) skip=$2; shift ;;
	--tcg) tcg=$2; shift ;;
	--script) script=$2; shift ;;
	--files) files=$2; shift ;;
	--mode) mode=$2; shift ;;
	--kernel) KVER=$2; shift ;;
	--fs) fs=$2; shift ;;
	--append) extra_append=$2; shift ;;
	--quiet) quiet=1 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-vm.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
case $mode in
numa|kmem|cxl) ;;
*) echo "run-vm.sh: --mode numa|kmem|cxl, not '$mode'" >&2; exit 2 ;;
esac
case $tcg in
single|multi) ;;
*) echo "run-vm.sh: --tcg single|multi, not '$tcg'" >&2; exit 2 ;;
esac
case $fs in
ext4|xfs) ;;
*) echo "run-vm.sh: --fs ext4|xfs, not '$fs'" >&2; exit 2 ;;
esac
modedir=$top/selftests/vm/modes/$mode
sfx=''	# result names carry the mode and the kernel, except the defaults'
[ "$mode" = numa ] || sfx=@$mode
kshort=$(echo "$KVER" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
[ "$KVER" = "$kdefault" ] || sfx=$sfx@$kshort
[ "$fs" = ext4 ] || sfx=$sfx@$fs

vm=$top/$B/vm
[ -n "${VM_LOGDIR:-}" ] && vm=$VM_LOGDIR/image
root=$vm/root
logs=${VM_LOGDIR:-$top/$B/logs}
logdir=$logs/vm
results=$logs/vm.results
mkdir -p "$logdir"
: >"$results"
fail_rig() { # the rig itself failed: count one failure
	echo "0 1 0 vm-rig$sfx" >"$results"
	echo "vm: $*" >&2
	exit 1
}

kernel=/boot/vmlinuz-$KVER
ko=${RIG_KO:-$top/$B/kmod/$KVER/tandem.ko}	# RIG_KO=FILE: another module file
[ -r "$kernel" ] || fail_rig "no kernel $kernel (make deps)"
[ -r "$ko" ] || fail_rig "no tandem.ko built for $KVER: make module KVER=$KVER (or make vm-modules)"
vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null | awk '{print $1}')
[ "$vermagic" = "$KVER" ] || fail_rig "$ko is built for '$vermagic', not for the kernel to boot ($KVER)"
command -v qemu-system-x86_64 >/dev/null || fail_rig "qemu-system-x86_64 missing (make deps)"
[ "$fs" = ext4 ] || command -v "mkfs.$fs" >/dev/null || fail_rig "mkfs.$fs missing (make deps)"

# copy an ELF and the shared libraries it needs (ldd) into the image
copy_elf() {
	local src=$1 dst=$2 lib
	mkdir -p "$root$(dirname "$dst")"
	cp -L "$src" "$root$dst"
	for lib in $(ldd "$src" 2>/dev/null | grep -o '/[^ ]*'); do
		[ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"; }
	done
}

build_image() {
	local m line t f
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,etc,lib/tandem,tests,extra,usr/bin,usr/sbin,proc,sys,dev,tmp,mnt/data}
	cp /bin/busybox "$root/bin/busybox"
	cp "$top/selftests/vm/init.sh" "$root/init"
	chmod +x "$root/init"
	: >"$root/etc/vm-modules"
	# shellcheck disable=SC2013
	for m in $(cat "$top/selftests/vm/modules.txt" "$modedir/modules.txt" 2>/dev/null | grep -v '^\s*#') $fs; do
		# --ignore-install: libnvdimm's modprobe.d "install" rule hides its insmod line
		modprobe -S "$KVER" --ignore-install --show-depends "$m" 2>/dev/null | while read -r line; do
			case $line in insmod\ *) ;; *) continue ;; esac
			f=$(awk '{print $2}' <<<"$line")
			grep -qx "$f" "$root/etc/vm-modules" && continue
			mkdir -p "$root$(dirname "$f")"
			cp "$f" "$root$f"
			echo "$f" >>"$root/etc/vm-modules"
		done
	done
	cp "$ko" "$root/lib/tandem/tandem.ko"
	[ -x "$top/$B/tandemctl" ] && copy_elf "$top/$B/tandemctl" /usr/bin/tandemctl
	for f in $(cat "$top/selftests/vm/extra-bins.txt" "$modedir/extra-bins.txt" 2>/dev/null | grep -v '^\s*#'); do
		if [ -x "$f" ]; then copy_elf "$f" "$f"; else echo "vm: note: $f not found, not in the image" >&2; fi
	done
	for t in "$top"/selftests/vm/tests/*.sh "$top/$B"/vm/tests/*; do
		[ -f "$t" ] || continue
		case ${t##*/} in *.d|*.o) continue ;; esac
		if file -b "$t" | grep -q 'dynamically linked'; then copy_elf "$t" "/tests/${t##*/}"; else cp "$t" "$root/tests/"; fi
	done
	if [ -f "$modedir/setup.sh" ]; then
		cp "$modedir/setup.sh" "$root/etc/vm-setup.sh"
		chmod +x "$root/etc/vm-setup.sh"
		cp "$top/selftests/vm/modes/lib.sh" "$root/etc/vm-setup-lib.sh"
	fi
	mkdir -p "$root/lib/ksft"
	cp "$top"/selftests/lib/*.sh "$root/lib/ksft/"
	[ -n "$files" ] && cp -a "$files/." "$root/extra/"
	[ -n "$script" ] && cp "$script" "$root/extra/"
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$vm/initramfs.cpio"
}

mkdir -p "$vm"
build_image || fail_rig "could not build the initramfs"
img=$vm/data.img
make_disk() {
	rm -f "$img"
	truncate -s "${disk}M" "$img"
	case $fs in
	ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 -L tandem-data "$img" ;;
	xfs) mkfs.xfs -q -f -L tandem-data "$img" ;;
	esac || fail_rig "mkfs.$fs failed"
}

throttle=""
[ "$bps" -gt 0 ] && throttle=",throttling.bps-total=$bps"
console=$logdir/console.log
tap=$logdir/tap.log
# slab debugging (sanity checks, red zones, poisoning) of tandem.ko's own
# caches: a use after free or an overrun there is reported as "BUG <cache>"
append="console=ttyS0 loglevel=5 panic=-1 slub_debug=FZP,tandem_* tandem.timeout=$ttimeout"
append="$append tandem.tests=$tests tandem.skip=$skip tandem.mode=$mode tandem.fs=$fs tandem.kernel=$kshort"
append="$append tandem.top=$top $extra_append"	# the checkout, as seen in /host
[ -n "$script" ] && append="$append tandem.script=$(basename "$script")"
# node 0 (CPUs, RAM) and node 1 (memory only) as the mode wants them
diskbus=''
m0=(-object memory-backend-ram,id=m0,size="${node0}M")
n0=(-numa node,nodeid=0,cpus=0-$((smp - 1)),memdev=m0)
cpu=max
case $mode in
numa)
	machine=(-M pc -m "$((node0 + node1))M" "${m0[@]}"
		-object memory-backend-ram,id=m1,size="${node1}M"
		"${n0[@]}" -numa node,nodeid=1,memdev=m1) ;;
kmem)
	# dax/kmem onlines whole 128 MiB memory blocks and the namespace keeps
	# its first MiBs for metadata: one extra block keeps node1 MiB usable
	nv=$((node1 + 128))
	machine=(-M pc,nvdimm=on -m "${node0}M,slots=2,maxmem=$((node0 + nv))M" "${m0[@]}"
		-object memory-backend-ram,id=nv0,size="${nv}M"
		"${n0[@]}" -numa node,nodeid=1
		-device nvdimm,memdev=nv0,id=nvdimm0,node=1) ;;
cxl)
	# as advised when this was first tried by hand (issue 7): a fresh label
	# area every boot, and a second, empty root port (with one, the memory
	# read as zeros). Backing files are sparse, removed after the run. CXL decodes 256 MiB units and
	# dax/kmem loses the first 128 MiB block to the namespace's metadata.
	rm -f "$vm/cxl-lsa0.raw" "$vm/cxl-mem0.raw"
	# Kernels after 6.1 need two more things of QEMU 7.2's device: the guest
	# must not see the hypervisor CPUID bit (a region commit flushes CPU
	# caches with wbinvd, and cpu_cache_has_invalidate_memregion() refuses
	# under a hypervisor: "Failed to synchronize CPU cache state"), and
	# cxl_pci must not set up event interrupts the device lacks ("Failed to
	# get interrupt for event Info log"): pcie_ports=compat keeps the OS from
	# asking _OSC for CXL error reporting, so the driver leaves events to the
	# firmware. Both are kept on 6.1, where neither is needed.
	cpu=max,-hypervisor
	append="$append pcie_ports=compat"
	cxlmb=$(((node1 + 128 + 255) / 256 * 256))
	diskbus=,bus=pcie.0	# not behind the CXL host bridge, which takes bridges only
	machine=(-M q35,cxl=on -m "${node0}M,slots=2,maxmem=$((node0 + 4096))M" "${m0[@]}"
		-object memory-backend-file,id=cxl-mem0,share=on,mem-path="$vm/cxl-mem0.raw",size="${cxlmb}M"
		-object memory-backend-file,id=cxl-lsa0,share=on,mem-path="$vm/cxl-lsa0.raw",size=1M
		"${n0[@]}"
		-device pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1
		-device cxl-rp,port=0,bus=cxl.1,id=cxl-rp0,chassis=0,slot=2
		-device cxl-rp,port=1,bus=cxl.1,id=cxl-rp1,chassis=0,slot=3
		-device cxl-type3,bus=cxl-rp0,memdev=cxl-mem0,lsa=cxl-lsa0,id=cxl-pmem0
		-M cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=4G) ;;
esac
tcgnote=''
[ "$tcg" = single ] && tcgnote=' (single-threaded TCG)'
keep_disk=0	# 1: boot again on the data disk as the last boot left it
boot_vm() {
[ "$keep_disk" = 1 ] || make_disk
: >"$console"; : >"$tap"
t0=$(date +%s.%N)
timeout -k 10 "$vmtimeout" qemu-system-x86_64 -accel "tcg,thread=$tcg" -cpu "$cpu" \
	-smp "$smp" "${machine[@]}" \
	-kernel "$kernel" -initrd "$vm/initramfs.cpio" -append "$append" \
	-drive "file=$img,if=none,id=data,format=raw$throttle" \
	-device "virtio-blk-pci,drive=data$diskbus" \
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
	-device "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot$diskbus" \
	-nic none -no-reboot -display none -monitor none \
	-serial "file:$console" -serial "file:$tap" &
qpid=$!
tailpid=
if [ "$quiet" -eq 0 ]; then
	tail -n +1 -f "$tap" --pid=$qpid &
	tailpid=$!
fi
wait $qpid
qstatus=$?
rm -f "$vm/cxl-lsa0.raw" "$vm/cxl-mem0.raw"
[ -n "$tailpid" ] && wait "$tailpid" 2>/dev/null
t1=$(date +%s.%N)
echo "# vm: qemu exited $qstatus after $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s$tcgnote"
}

# The kernel itself can die while booting under TCG, before init runs and
# before tandem.ko is in the image's kernel: seen once in CI on 6.12, an
# int3 oops in sched_clock_cpu while the kernel patched its own text
# (static keys) on the other vCPU. Such a boot ran none of our code, so it is
# booted once more, and said so; a panic once init has written to the TAP
# console (tests began, or the module was loaded) is never retried.
rm -f "$tap.boots" "$logdir"/console-before-reset-*.log
boot_vm
if [ ! -s "$tap" ] && grep -aq 'Kernel panic' "$console"; then
	echo "# vm: the kernel panicked while booting, before init ran (none of tandem's code had run); console:"
	grep -a -m1 -B2 -A8 -E 'Oops|BUG:|Kernel panic' "$console" | sed 's/^/#   /'
	echo "# vm: booting once more"
	boot_vm
fi

# the test a boot's TAP ($1) says reset the VM: its last marker is "# vm-reset NAME"
reset_by() {
	tr -d '\r' <"$1" | grep -a -E '^# vm-(reset|end|done)( |$)' | tail -n 1 |
		sed -n 's/^# vm-reset \([^ ]*\)$/\1/p'
}
resets=0 base_append=$append
while [ $resets -lt 3 ] && r=$(reset_by "$tap") && [ -n "$r" ]; do
	resets=$((resets + 1))
	cat "$tap" >>"$tap.boots"
	mv "$console" "$logdir/console-before-reset-$resets.log"
	echo "# vm: $r reset the VM: booting again on the same data disk"
	keep_disk=1 append="$base_append tandem.resume=$r"
	boot_vm
done
if [ -f "$tap.boots" ]; then
	cat "$tap.boots" "$tap" >"$tap.tmp" && mv "$tap.tmp" "$tap"
	rm -f "$tap.boots"
fi

# split the TAP stream into one log per test program and score each
# (the guest's tty turns \n into \r\n)
tr -d '\r' <"$tap" >"$tap.tmp" && mv "$tap.tmp" "$tap"
rm -f "$logdir"/t-*.log
awk -v dir="$logdir" '
	/^# vm-begin / { name=$3; file=dir "/t-" name ".log"; printf "" > file; next }
	/^# vm-end /   { print "# exit " $4 >> file; close(file); print $3, $4; name=""; next }
	name != ""     { print >> file }
' "$tap" >"$logdir/statuses"
while read -r name status; do
	results_line "$name$sfx" "$logdir/t-$name.log" "$status" >>"$results"
done <"$logdir/statuses"
grep -a '^# vm-splat ' "$tap" | while read -r _ _ name; do
	echo "0 1 0 dmesg-splat-after-$name$sfx" >>"$results"
done
if ! grep -aq '^# vm-done' "$tap"; then
	echo "0 1 0 vm-did-not-finish$sfx" >>"$results"
	echo "# vm: the VM did not finish (hang, panic or timeout); console tail:"
	tail -n 60 "$console" | sed 's/^/#   /'
fi
awk -v m="$sfx" '{p+=$1; f+=$2; s+=$3} END {printf "vm%s: %d passed, %d failed, %d skipped\n", m, p, f, s; exit f > 0}' "$results"
