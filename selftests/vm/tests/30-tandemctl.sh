#!/bin/sh
# tandemctl against the module: add/list/show/del round trip, JSON, kernel
# errors as "kernel reports: ...", exit statuses, privileges, 10 000 files,
# and the mount pinned while a dataset is registered.
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
D=/mnt/data/cli
ksft_plan 33

rmmod tandem 2>/dev/null
out=$(tandemctl status)
ksft_check "status without the module says so, exit 0" sh -c "tandemctl status | grep -q 'not loaded'"
err=$(tandemctl dataset list 2>&1); st=$?
case "$st:$err" in
0:*) ksft_fail "dataset list without the module fails" ;;
*"tandem.ko is not loaded"*) ksft_pass "dataset list without the module fails clearly" ;;
*) ksft_diag "$err"; ksft_fail "dataset list without the module fails clearly" ;;
esac
insmod "$KO" || { ksft_fail "load"; ksft_finish; }

mkdir -p $D/sub
echo one >$D/x; echo two >$D/sub/y; echo three >$D/sub/z; ln -sf $D/x $D/link
out=$(tandemctl dataset add train $D)
ksft_expect_eq "add walks the tree (a link to a file already taken counts once: one walk, Documentation/tandemctl.md)" "$out" "dataset 1 (train): 3 files registered, 0 duplicates (skipped: 1 duplicate)"
ksft_check "list shows it" sh -c "tandemctl dataset list | grep -Eq '^1 +train +3 '"
ksft_check "list -j" sh -c "tandemctl -j dataset list | grep -q '\"name\":\"train\",\"files\":3'"
ksft_expect_eq "show lists the files" "$(tandemctl dataset show train | grep -c "^  $D/")" 3
ksft_check "show -j by id" sh -c "tandemctl -j dataset show 1 | grep -q '\"path\":\"$D/sub/y\"'"
ksft_check "status -j names node 1" sh -c "tandemctl -j status | grep -q '\"cxl_node\":1,'"

# every verb that changes something says so: one line, or one JSON document
# with -j (Documentation/tandemctl.md, "Conventions"); knobs take rates
JQ=/usr/bin/jq
ksft_expect_eq "config set prints what it set" "$(tandemctl config set steer on)" "set steer yes"
ksft_expect_eq "config set -j: one document" \
	"$(tandemctl -j config set steer on | $JQ -s 'length == 1 and .[0].steer == true')" true
tandemctl config set prefetch_kbps 50M >/dev/null
ksft_expect_eq "a rate for a KiB/s knob is converted: 50M = 51200 KiB/s (sysfs)" \
	"$(cat /sys/kernel/tandem/prefetch_kbps)" 51200
tandemctl config set prefetch_kbps 0 >/dev/null
ksft_expect_eq "steer --no-wait -j: one document" \
	"$(tandemctl -j steer --no-wait train | $JQ -s 'length == 1 and .[0].id == 1')" true

# expect_err NAME WANT CMD...: fails, stderr contains WANT
expect_err() {
	_n=$1 _w=$2; shift 2
	_e=$("$@" 2>&1 >/dev/null); _s=$?
	if [ $_s -ne 0 ] && echo "$_e" | grep -qF "$_w"; then ksft_pass "$_n"; else
		ksft_diag "exit $_s: $_e"; ksft_fail "$_n"; fi
}
expect_err "duplicate name" "kernel reports: a dataset with this name exists: 'train'" tandemctl dataset add train $D
expect_err "bad name" "kernel reports: dataset name must be" tandemctl dataset add "a/b" $D
expect_err "unknown dataset name" "tandemctl: no dataset 'nosuch'" tandemctl dataset show nosuch
expect_err "unknown dataset id" "kernel reports: no dataset with this id: dataset id 999" tandemctl dataset del 999
expect_err "bad node" "kernel reports: cxl_node: not an online NUMA node with memory" tandemctl config set cxl_node 5
expect_err "missing path" "/nonexistent: No such file or directory" tandemctl dataset add x /nonexistent
expect_err "no files" "no regular files" sh -c "mkdir -p $D/empty && tandemctl dataset add x $D/empty"
expect_err "unknown verb" "unknown verb 'frob'" tandemctl dataset frob
expect_err "without CAP_SYS_ADMIN" "kernel reports: CAP_SYS_ADMIN is required" \
	/usr/bin/setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin tandemctl dataset add y $D
ksft_check "a failed add leaves no dataset" sh -c "[ \$(cat /sys/kernel/tandem/nr_datasets) = 1 ]"
ksft_check "--help exits 0" sh -c "tandemctl --help | grep -q 'dataset add'"
ksft_check "per-command help" sh -c "tandemctl dataset add --help 2>&1 | grep -q 'NAME PATH'"

# the mount is pinned while registered, free again after del
ksft_check "umount refused while a dataset pins it" sh -c "! umount /mnt/data 2>/dev/null"
ksft_expect_eq "dataset del prints one line" "$(tandemctl dataset del train)" "dataset 1 unregistered"
if umount /mnt/data; then
	ksft_pass "umount allowed after del"
	mount -t "${DATA_FS:-ext4}" /dev/vda /mnt/data
else
	ksft_fail "umount allowed after del"
fi

# 10 000 files in one dataset, registered in batches and listed back
mkdir -p /mnt/data/many
(cd /mnt/data/many && i=0 && while [ $i -lt 10000 ]; do : >f$i; i=$((i + 1)); done)
t0=$(cut -d' ' -f1 /proc/uptime)
out=$(tandemctl dataset add many /mnt/data/many)
t1=$(cut -d' ' -f1 /proc/uptime)
ksft_diag "10000 files registered in $(echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}') s (TCG)"
ksft_expect_eq "10000 files registered" "$out" "dataset 2 (many): 10000 files registered, 0 duplicates"
ksft_expect_eq "sysfs counts 10000" "$(cat /sys/kernel/tandem/datasets/2/files)" 10000
ksft_expect_eq "show lists 10000" "$(tandemctl dataset show many | grep -c '^  /mnt/data/many/f')" 10000
ksft_expect_eq "show -j lists 10000" "$(tandemctl -j dataset show many | grep -o '"path"' | wc -l)" 10000
ksft_check "del" tandemctl dataset del many
ksft_check "unload with nothing registered" rmmod tandem
ksft_finish
