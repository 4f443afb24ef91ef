#!/bin/sh
# /sys/kernel/tandem: files, modes, validated writes, privilege, and the
# per-dataset directory checked against fincore (the kernel's own count).
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
S=/sys/kernel/tandem
D=/mnt/data/sysfs-test
ksft_plan 51

rmmod tandem 2>/dev/null
insmod "$KO" || { ksft_fail "load"; ksft_finish; }

for f in version cxl_node_reason nr_datasets nr_files max_datasets max_files live_objects; do
	ksft_expect_eq "$f mode" "$(stat -c %a $S/$f 2>/dev/null)" 444
done
for f in cxl_node steer prefetch_kbps steer_kbps; do
	ksft_expect_eq "$f mode" "$(stat -c %a $S/$f 2>/dev/null)" 644
done
ksft_check "datasets/ exists" [ -d $S/datasets ]

# write VALUE to FILE; expect it refused and FILE unchanged
refused() {
	before=$(cat "$S/$1")
	if echo "$2" >"$S/$1" 2>/dev/null; then
		ksft_fail "$1 refuses '$2'"
	else
		ksft_expect_eq "$1 refuses '$2' (unchanged)" "$(cat "$S/$1")" "$before"
	fi
}
# write VALUE to FILE; expect WANT read back
accepted() {
	if echo "$2" >"$S/$1"; then
		ksft_expect_eq "$1 accepts '$2'" "$(cat "$S/$1")" "$3"
	else
		ksft_fail "$1 accepts '$2'"
	fi
}
refused cxl_node abc
refused cxl_node 2
refused cxl_node -3
refused cxl_node 1x
refused cxl_node ""
refused steer maybe
refused steer 2
refused prefetch_kbps -1
refused prefetch_kbps abc
refused prefetch_kbps 999999999999
refused steer_kbps abc
accepted cxl_node 0 0
accepted cxl_node -2 -2
accepted cxl_node -1 1
accepted steer 0 0
accepted steer Y 1
accepted prefetch_kbps 2048 2048
accepted steer_kbps 512 512
refused version 9.9
ksft_check "version is x.y.z" grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+' $S/version

# root without CAP_SYS_ADMIN: EPERM; not root: the mode refuses
err=$(/usr/bin/setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin sh -c "echo 0 > $S/steer" 2>&1)
case $err in
*"Operation not permitted"*) ksft_expect_eq "root without CAP_SYS_ADMIN gets EPERM" "$(cat $S/steer)" 1 ;;
*) ksft_diag "got: $err"; ksft_fail "root without CAP_SYS_ADMIN gets EPERM" ;;
esac
err=$(/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo 0 > $S/steer" 2>&1)
case $err in
*"Permission denied"*) ksft_pass "an unprivileged user cannot open knobs for writing" ;;
*) ksft_diag "got: $err"; ksft_fail "an unprivileged user cannot open knobs for writing" ;;
esac

# datasets/<id>/: against the files' real sizes and fincore's page counts
mkdir -p $D
dd if=/dev/urandom of=$D/a bs=4096 count=100 2>/dev/null
dd if=/dev/urandom of=$D/b bs=4096 count=28 2>/dev/null
dd if=/dev/urandom of=$D/c bs=1000 count=3 2>/dev/null
sync
echo 1 >/proc/sys/vm/drop_caches
id=$(tandemctl -j dataset add sysfs-ds $D | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
DS=$S/datasets/$id
ksft_check "datasets/$id exists" [ -d "$DS" ]
for f in name files pages_cached bytes node_pages target_node steer_pending prefetch counters/steered; do
	ksft_expect_eq "datasets/$id/$f mode" "$(stat -c %a $DS/$f 2>/dev/null)" 444
done
ksft_expect_eq "name" "$(cat $DS/name)" sysfs-ds
ksft_expect_eq "files" "$(cat $DS/files)" 3
ksft_expect_eq "bytes" "$(cat $DS/bytes)" $((409600 + 114688 + 3000))
fincore_pages() { fincore -n -b -o PAGES "$@" | awk '{s += $1} END {print s + 0}'; }
cat $D/a $D/c >/dev/null
ksft_expect_eq "pages_cached equals fincore after reading a and c" "$(cat $DS/pages_cached)" "$(fincore_pages $D/a $D/b $D/c)"
cat $D/b >/dev/null
ksft_expect_eq "pages_cached equals fincore after reading all" "$(cat $DS/pages_cached)" "$(fincore_pages $D/a $D/b $D/c)"
ksft_expect_eq "nr_datasets" "$(cat $S/nr_datasets)" 1
tandemctl dataset del sysfs-ds
ksft_check "datasets/$id removed with the dataset" [ ! -e "$DS" ]
rmmod tandem
ksft_finish
