#!/bin/sh
# Runs inside the VM rig (busybox sh, cwd /mnt/data): the module's control
# plane on an embedded default dataset.
set -e
step() { echo; echo "### $*"; }
step "load tandem.ko (cxl_node=-1: auto-detect the CPU-less memory node)"
insmod /lib/tandem/tandem.ko cxl_node=-1
dmesg | grep 'tandem: loaded' | sed 's/^\[[^]]*\] //'
step "tandemctl status"
tandemctl status
step "generate a dataset: 64 files of 256 KiB on the throttled disk"
mkdir -p /mnt/data/demo
i=0
while [ $i -lt 64 ]; do
	dd if=/dev/urandom of=/mnt/data/demo/sample$i bs=64k count=4 2>/dev/null
	i=$((i + 1))
done
sync
echo 3 >/proc/sys/vm/drop_caches
step "tandemctl dataset add demo /mnt/data/demo"
tandemctl dataset add demo /mnt/data/demo
step "read half of it, then tandemctl dataset list"
cat /mnt/data/demo/sample1* /mnt/data/demo/sample2* >/dev/null
tandemctl dataset list
step "sysfs: /sys/kernel/tandem/datasets/1/"
for f in name files bytes pages_cached; do echo "$f: $(cat /sys/kernel/tandem/datasets/1/$f)"; done
step "tandemctl -j dataset show demo (first 300 characters)"
tandemctl -j dataset show demo | cut -c1-300
step "unregister and unload"
tandemctl dataset del demo
rmmod tandem
echo "demo finished"
