#!/bin/busybox sh
# /init of the VM rig: mount, load modules, run the tests (or a script),
# report TAP on /dev/ttyS1 (ttyS0 is the kernel console), power off.
/bin/busybox mkdir -p /proc /sys /dev /tmp /run /mnt/data /usr/bin /usr/sbin /sbin
/bin/busybox --install -s /bin
export PATH=/usr/local/bin:/usr/bin:/usr/sbin:/bin:/sbin
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o size=64m tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
ln -sf /proc/self/fd /dev/fd

arg() { # value of tandem.$1= on the kernel command line
	for w in $(cat /proc/cmdline); do
		case $w in tandem.$1=*) echo "${w#tandem.$1=}"; return ;; esac
	done
}
TESTS=$(arg tests); TESTS=${TESTS:-*}
SKIP=$(arg skip)
TIMEOUT=$(arg timeout); TIMEOUT=${TIMEOUT:-300}
SCRIPT=$(arg script)
RESUME=$(arg resume)	# the test that reset the VM (run-vm.sh): go on from it
export VM_MODE=$(arg mode)
export DATA_FS=$(arg fs) VM_KERNEL=$(arg kernel) HOST_TOP=$(arg top)
export TANDEM_KO=/lib/tandem/tandem.ko DATA=/mnt/data TANDEM_VM=1 TERM=dumb

while read -r m; do
	[ -n "$m" ] && insmod "$m" 2>/dev/null
done </etc/vm-modules
[ -x /etc/vm-setup.sh ] && . /etc/vm-setup.sh
if mount -t "${DATA_FS:-ext4}" /dev/vda /mnt/data; then
	:
else
	echo "rig: cannot mount /dev/vda ($DATA_FS)" >/dev/ttyS1
fi
mkdir -p /host
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /host 2>/dev/null ||
	rmdir /host
echo 0 >/proc/sys/kernel/printk_ratelimit 2>/dev/null
dmesg -c >/tmp/dmesg.boot

exec 3>/dev/ttyS1
splat='WARNING:|BUG:|BUG [^ ]+ \(|Oops|general protection fault|kernel BUG|UBSAN:|KASAN:|refcount_t:|list_add corruption|list_del corruption|still has objects|tandem: .*leak|hung_task|soft lockup|rcu_sched self-detected|Call Trace:'

check_dmesg() { # $1 = name, $2 = exit status; reports splats and failures
	dmesg -c >/tmp/dmesg.cur
	if grep -Eq "$splat" /tmp/dmesg.cur; then
		echo "# vm-splat $1" >&3
		echo "# dmesg after $1 (tail):" >&3
		tail -n 60 /tmp/dmesg.cur | sed 's/^/#   /' >&3
	elif [ "${2:-0}" -ne 0 ] && [ "${2:-0}" -ne 4 ]; then
		echo "# dmesg after $1 (tail):" >&3
		tail -n 30 /tmp/dmesg.cur | sed 's/^/#   /' >&3
	fi
}

echo "TAP version 13" >&3
echo "# rig: kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) cpus, nodes: $(ls -d /sys/devices/system/node/node* | sed 's/.*node//' | tr '\n' ' ')mode ${VM_MODE:-numa}" >&3
echo "# rig: data disk ${DATA_FS:-ext4}, host root $( [ -d /host/usr ] && echo "at /host" || echo "not shared")" >&3
echo "# rig: boot-to-tests $(cut -d' ' -f1 /proc/uptime) s" >&3
check_dmesg boot
if [ -f /tmp/vm-setup.status ]; then	# the mode's setup reports as a test
	setup=vm-setup-$VM_MODE
	[ -n "$RESUME" ] && setup=$setup-after-reset
	echo "# vm-begin $setup" >&3
	cat /tmp/vm-setup.log >&3
	echo "# vm-end $setup $(cat /tmp/vm-setup.status)" >&3
fi

if [ -n "$SCRIPT" ]; then
	echo "# vm-begin $SCRIPT" >&3
	(cd /mnt/data && timeout "$TIMEOUT" sh "/extra/$SCRIPT") >&3 2>&1
	st=$?
	echo "# vm-end $SCRIPT $st" >&3
	check_dmesg "$SCRIPT" $st
else
	for t in /tests/*; do
		name=${t##*/}
		match=0	# TESTS: globs separated by commas (not expanded here)
		set -f
		for pat in $(echo "$TESTS" | tr ',' ' '); do
			case $name in $pat) match=1 ;; esac
		done
		for pat in $(echo "$SKIP" | tr ',' ' '); do
			case $name in $pat) match=0 ;; esac
		done
		set +f
		[ $match -eq 1 ] || continue
		resumed=0
		if [ -n "$RESUME" ]; then
			[ "$name" = "$RESUME" ] || continue	# ran before the reset
			RESUME='' resumed=1
		fi
		echo "# vm-begin $name" >&3
		t0=$(cut -d' ' -f1 /proc/uptime)
		case $name in
		*.sh) (cd /tmp && VM_RESUMED=$resumed timeout "$TIMEOUT" sh "$t") >&3 2>&1 ;;
		*) (cd /tmp && VM_RESUMED=$resumed timeout "$TIMEOUT" "$t") >&3 2>&1 ;;
		esac
		st=$?
		echo "# vm-time $name $(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN {printf "%.1f", b - a}') s" >&3
		echo "# vm-end $name $st" >&3
		check_dmesg "$name" $st
		grep -q '^tandem ' /proc/modules && rmmod tandem 2>/dev/null
		sync
	done
fi
echo "# vm-done" >&3
sync
umount /mnt/data 2>/dev/null
umount /host 2>/dev/null
poweroff -f
