#!/bin/sh
# Load, register, unload 50 times: no leaked objects (the module's own count
# at unload, its slab cache destroyed, the slab total), no pinned mount.
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
D=/mnt/data/leak
ksft_plan 6

mkdir -p $D
for i in 1 2 3 4; do dd if=/dev/urandom of=$D/f$i bs=4096 count=16 2>/dev/null; done
rmmod tandem 2>/dev/null
sync; echo 3 >/proc/sys/vm/drop_caches
slab0=$(awk '/^Slab:/ {print $2}' /proc/meminfo)
dmesg -c >/dev/null
fails=0
i=0
while [ $i -lt 50 ]; do
	insmod "$KO" || fails=$((fails + 1))
	tandemctl dataset add "d$i" $D >/dev/null || fails=$((fails + 1))
	tandemctl dataset add "e$i" $D/f1 $D/f2 >/dev/null || fails=$((fails + 1))
	cat $D/* >/dev/null
	rmmod tandem || fails=$((fails + 1))
	i=$((i + 1))
done
ksft_expect_eq "50 load/register/unload cycles" "$fails" 0
ksft_check "no leak reported at unload" sh -c "! dmesg | grep -q 'leaked'"
ksft_check "no slab cache left behind" sh -c "! grep -q '^tandem_file ' /proc/slabinfo"
ksft_check "no kmem_cache_destroy complaint" sh -c "! dmesg | grep -q 'still has objects'"
sync; echo 3 >/proc/sys/vm/drop_caches
slab1=$(awk '/^Slab:/ {print $2}' /proc/meminfo)
ksft_diag "Slab: $slab0 kB before, $slab1 kB after"
# 100 datasets and 300 files leaked would be well over 64 kB of kmalloc
ksft_check "slab total did not grow by more than 512 kB" [ $((slab1 - slab0)) -lt 512 ]
if umount /mnt/data; then
	ksft_pass "no dentry or mount pinned after unload"
	mount -t "${DATA_FS:-ext4}" /dev/vda /mnt/data
else
	ksft_fail "no dentry or mount pinned after unload"
fi
ksft_finish
