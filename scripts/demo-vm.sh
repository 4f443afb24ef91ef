#!/bin/sh
# make demo, inside the VM rig (busybox sh, cwd /mnt/data): node 1 is a
# CPU-less memory node (the emulated CXL memory), /mnt/data a throttled
# virtio disk (the remote dataset store). scripts/demo.sh put the scenario
# (params.sh) and the steps (vm-stagger.sh, from bench/stagger/) in /extra:
# tandem.ko, a generated dataset, calibration, then two training instances
# (tandemctl loadgen) released by `tandemctl run --stagger auto`, and again
# with simultaneous start.
echo "### the VM: $(grep -c ^processor /proc/cpuinfo) CPUs; memory per NUMA node:"
for n in /sys/devices/system/node/node*; do
	echo "#   ${n##*/}: $(awk '/MemTotal/ { printf "%d MiB", $4 / 1024 }' "$n/meminfo"), CPUs: $(cat "$n/cpulist" | sed 's/^$/none/')"
done
echo "### tandem.ko, the dataset, calibration, the two runs (comments from each step follow)"
. /extra/vm-stagger.sh
echo "### tandemctl status and dataset list (the detected CXL node, the registered dataset)"
tandemctl status | sed 's/^/#   /'
tandemctl dataset list | sed 's/^/#   /'
echo "### tandemctl residency (tandem.ko's view of the dataset after the last run)"
tandemctl residency ds | sed 's/^/#   /'
