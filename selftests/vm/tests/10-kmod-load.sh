#!/bin/sh
# tandem.ko module parameters: defaults, each parameter, bad values refused
# with a clear dmesg line, modinfo descriptions.
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
P=/sys/module/tandem/parameters
S=/sys/kernel/tandem
ksft_plan 42

load() { rmmod tandem 2>/dev/null; insmod "$KO" "$@"; }

ksft_check "loads with defaults" load
ksft_expect_eq "auto-detection picks node 1 (the CPU-less node)" "$(cat $S/cxl_node)" 1
ksft_check "reason names the auto-detection" grep -q "^auto: node 1 has memory" $S/cxl_node_reason
ksft_expect_eq "steer defaults on" "$(cat $S/steer)" 1
ksft_expect_eq "prefetch_kbps defaults to 0" "$(cat $S/prefetch_kbps)" 0
ksft_expect_eq "steer_batch defaults off" "$(cat $P/steer_batch)" N

# each parameter, and its effect where it shows
while read -r param file want; do
	if load "$param"; then
		got=$(cat "$file")
		ksft_expect_eq "load with $param ($file)" "$got" "$want"
	else
		ksft_fail "load with $param"
	fi
done <<EOT
cxl_node=1 $S/cxl_node 1
cxl_node=0 $S/cxl_node 0
cxl_node=-1 $S/cxl_node 1
cxl_node=-2 $S/cxl_node -2
steer=0 $S/steer 0
steer=1 $S/steer 1
prefetch_kbps=10240 $S/prefetch_kbps 10240
steer_kbps=2048 $S/steer_kbps 2048
max_datasets=1 $S/max_datasets 1
max_files=5 $S/max_files 5
max_datasets=4096 $P/max_datasets 4096
steer_batch=1 $P/steer_batch Y
EOT

# steer_batch can be changed while loaded, by root, and only to a bool
load
ksft_check "steer_batch set at run time" sh -c "echo 1 > $P/steer_batch && grep -qx Y $P/steer_batch"
ksft_check "steer_batch refuses a non-bool" sh -c "! echo maybe > $P/steer_batch 2>/dev/null && grep -qx Y $P/steer_batch"

# bad values: the load fails, nothing is left behind, dmesg says why
while read -r param msg; do
	rmmod tandem 2>/dev/null
	dmesg -c >/dev/null
	if insmod "$KO" "$param" 2>/dev/null; then
		ksft_fail "bad $param refused"
		continue
	fi
	if [ -d $S ]; then
		ksft_fail "bad $param refused (sysfs left behind)"
	elif dmesg | grep -q "$msg"; then
		ksft_pass "bad $param refused: $(dmesg | grep "$msg" | tail -n 1 | sed 's/^\[[^]]*\] //')"
	else
		ksft_diag "dmesg: $(dmesg | tail -n 2)"
		ksft_fail "bad $param refused with a clear message"
	fi
done <<EOT
cxl_node=2 tandem: cxl_node=2: not an online NUMA node with memory
cxl_node=-3 tandem: cxl_node=-3: not an online NUMA node with memory
cxl_node=99999 tandem: cxl_node=99999: not an online NUMA node with memory
cxl_node=abc invalid for parameter .cxl_node
max_datasets=0 tandem: max_datasets=0 is out of range
max_datasets=4097 tandem: max_datasets=4097 is out of range
max_files=0 tandem: max_files=0 is out of range
prefetch_kbps=4294967295 tandem: prefetch_kbps=4294967295 is out of range
steer_kbps=4294967295 tandem: steer_kbps=4294967295 is out of range
steer=maybe invalid for parameter .steer
steer_batch=maybe invalid for parameter .steer_batch
EOT

# modinfo: every parameter described with unit and default
parms=$(/usr/sbin/modinfo -F parm "$KO")
for p in cxl_node steer prefetch_kbps steer_kbps max_datasets max_files steer_batch cpu_headroom_kb; do
	line=$(echo "$parms" | grep "^$p:")
	case $line in
	*"default: "*) ksft_pass "modinfo describes $p with its default" ;;
	*) ksft_diag "modinfo: '$line'"; ksft_fail "modinfo describes $p with its default" ;;
	esac
done
ksft_expect_eq "modinfo version" "$(/usr/sbin/modinfo -F version "$KO")" "$(load && cat $S/version)"
ksft_check "unloads" rmmod tandem
ksft_check "sysfs gone after unload" [ ! -e $S ]
ksft_finish
