#!/bin/sh
# The rig itself: NUMA layout, throttled data disk, tools present.
. /lib/ksft/ksft.sh
ksft_plan 5
cpus1=$(cat /sys/devices/system/node/node1/cpulist 2>/dev/null)
ksft_expect_eq "node1 has no cpus" "$cpus1" ""
mem1=$(awk '/MemTotal/ {print $4}' /sys/devices/system/node/node1/meminfo 2>/dev/null)
ksft_check "node1 has memory (${mem1:-0} kB)" [ "${mem1:-0}" -gt 0 ]
ksft_check "data disk mounted" grep -q ' /mnt/data ext4 ' /proc/mounts
ksft_check "tandem.ko present" [ -r "$TANDEM_KO" ]
ksft_check "fincore runs" fincore /init
ksft_finish
