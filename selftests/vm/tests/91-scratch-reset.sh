#!/bin/sh
# A VM reset in the middle of a scratch's drain (Documentation/scratch.md,
# "What a reboot leaves"), in two boots of one run (run-vm.sh: "# vm-reset",
# then the VM boots again on the same data disk with VM_RESUMED=1):
#   boot 1: a scratch on the CPU-less node drained at 1 MiB/s to the disk;
#     three files drained, then written again (a 256 KiB, b and c 2 MiB,
#     sha256 kept on the disk); the reset (sysrq b) 0.3 s after the last
#     close, once a is drained and b's temporary .b.tandem-drain has bytes,
#     with no sync of the drain;
#   boot 2: each destination file is its previous or its new complete
#     version (sha256), never a torn one (a new, b old); `scratch show` and
#     `list` report the scratch lost at the reboot, and exactly the files
#     whose new version is not at the destination, with their size and mtime; `drain` and a
#     new `create` of the name are refused until `del`, which clears the record.
# Then tandem.ko unloaded while a copy is in progress (its temporary there,
# before and after the rmmod, the file not yet renamed): the drain finishes
# with the same sha256 (the tier does not use the module). About 38 s more
# than the boot alone (a second boot and the two phases; scratch.md).
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
D=/mnt/data/scratch-reset
OUT=$D/out
export TANDEM_SCRATCH_DIR=/run/tandem-test-scratch
# the VM's / is an initramfs, gone at a reset: the durable record on the disk
export TANDEM_SCRATCH_RECORD_DIR=$D/record
M=$TANDEM_SCRATCH_DIR/rs/mnt

cpuless=
for n in /sys/devices/system/node/node*; do
	[ -z "$(cat "$n/cpulist")" ] && { cpuless=${n##*node}; break; }
done
# wait_drained NAME SECONDS: until nothing is pending; 0 when so
wait_drained() {
	i=0
	while [ $i -lt $(($2 * 10)) ]; do
		[ "$(tandemctl -j scratch show "$1" 2>/dev/null | jq -r .pending_files)" = 0 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# first_tmp DIR [PREFIX]: a drain temporary with bytes in DIR (PREFIX.*), waited
# for up to 10 s
first_tmp() {
	i=0
	while [ $i -lt 200 ]; do
		t=$(find "$1" -name "${2:-.}*.tandem-drain" -size +0 2>/dev/null | head -n 1)
		[ -n "$t" ] && { echo "$t"; return 0; }
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# ---- boot 1: drain, then the reset inside a copy ----
if [ "${VM_RESUMED:-0}" != 1 ]; then
	if [ -z "$cpuless" ]; then
		ksft_plan 1
		ksft_skip "a reset mid-drain" "no CPU-less node in this VM"
		ksft_finish
	fi
	# said first, so the serial line has it long before the reset
	echo "# vm-reset ${0##*/}"
	rm -rf $D
	mkdir -p $OUT
	if ! tandemctl scratch create rs --size 64M --drain-to $OUT --rate 1M >/dev/null; then
		ksft_plan 1
		ksft_fail "boot 1: scratch create"
		ksft_finish
	fi
	for f in a b c; do dd if=/dev/urandom of=$M/$f bs=65536 count=4 2>/dev/null; done
	wait_drained rs 10 || echo "# boot 1: the first versions did not drain in 10 s"
	(cd $OUT && sha256sum a b c) >$D/old.sums
	# a small (its copy durable before the reset), b and c 2 MiB
	dd if=/dev/urandom of=/tmp/a bs=65536 count=4 2>/dev/null
	for f in b c; do dd if=/dev/urandom of=/tmp/$f bs=1048576 count=2 2>/dev/null; done
	(cd /tmp && sha256sum a b c) >$D/new.sums
	sync	# the sums and the first copies: what boot 2 compares with
	for f in a b c; do cp /tmp/$f $M/$f; done
	(cd $M && stat -c '%n %s %Y' a b c) | dd of=$D/new.stat conv=fsync 2>/dev/null
	# the last close 0.3 s (a journal commit or so) before the reset; b's
	# copy takes 2 s at the cap
	sleep 0.3
	t=$(first_tmp $OUT .b)
	# the fact, fsync'ed (the drain is not: ext4 commits what it holds)
	echo "mid-copy ${t##*/} $(stat -c %s "$t" 2>/dev/null)" | dd of=$D/facts conv=fsync 2>/dev/null
	echo "# boot 1: $(cat $D/facts); resetting"
	[ -n "$t" ] && [ -e "$t" ] && echo b >/proc/sysrq-trigger
	sleep 5
	ksft_plan 1
	ksft_fail "boot 1: the reset did not happen (no copy in progress seen)"
	ksft_finish
fi

# ---- boot 2 ----
ksft_plan 19
ksft_check "boot 1 reset the VM while a copy was in progress ($(cat $D/facts 2>&1))" \
	grep -q '^mid-copy \.b\.tandem-drain [1-9]' $D/facts
torn= kept= lostwant=
for f in a b c; do
	s=$(cd $OUT && sha256sum $f 2>/dev/null)
	if [ "$s" = "$(grep " $f\$" $D/new.sums)" ]; then
		kept="$kept $f:new"
	elif [ "$s" = "$(grep " $f\$" $D/old.sums)" ]; then
		kept="$kept $f:old" lostwant="$lostwant $f"
	else
		torn="$torn $f"
	fi
done
ksft_diag "after the reset:$kept"
ksft_expect_eq "each destination file is its previous or its new complete version" "$torn" ""
show=$(tandemctl -j scratch show rs)
ksft_expect_eq "show: the scratch was lost at the reboot" \
	"$(echo "$show" | jq -r .lost_at_reboot)" true
got=$(echo "$show" | jq -r '.files[].path' | tr '\n' ' ')
ksft_diag "show reports as not durable: $got"
missing= wrong=
for f in $lostwant; do
	echo " $got" | grep -q " $f " || missing="$missing $f"
	want=$(grep "^$f " $D/new.stat | cut -d' ' -f2-)
	have=$(echo "$show" | jq -r --arg p $f '.files[] | select(.path == $p) | "\(.bytes) \(.mtime | floor)"')
	[ "$have" = "$want" ] || wrong="$wrong $f($have/$want)"
done
ksft_expect_eq "every file whose new version is not durable is reported (none silently dropped)" \
	"$missing" ""
ksft_expect_eq "... with the size and mtime it had when queued" "$wrong" ""
ksft_expect_eq "a, drained before the reset, is its new version; b, whose copy the reset cut, the old" \
	"$(echo "$kept" | grep -o 'a:[a-z]*') $(echo "$kept" | grep -o 'b:[a-z]*')" "a:new b:old"
ksft_expect_eq "show reports exactly the files whose new version is not durable (no false alarm)" \
	"$got" "$(echo $lostwant | tr ' ' '\n' | sed 's/$/ /' | tr -d '\n')"
ksft_check "at least one file was lost (the reset fell inside the drain)" test -n "$lostwant"
ksft_expect_eq "lost_files and lost_bytes add up the files" \
	"$(echo "$show" | jq -r '"\(.lost_files) \(.lost_bytes)"')" \
	"$(echo "$show" | jq -r '"\(.files | length) \([.files[].bytes] | add // 0)"')"
ksft_check "show's text says so" sh -c "tandemctl scratch show rs | grep -q 'lost at a reboot'"
ksft_expect_eq "list: rs, lost" \
	"$(tandemctl -j scratch list | jq -r '.[] | select(.name == "rs") | .lost_at_reboot')" true
tandemctl scratch drain rs >/dev/null 2>$D/err
ksft_check "drain of a lost scratch: exit 1, one line" \
	sh -c "[ $? = 1 ] && [ \$(wc -l <$D/err) = 1 ] && grep -q 'lost at a reboot' $D/err"
tandemctl scratch create rs --size 1M --drain-to $OUT >/dev/null 2>$D/err
ksft_check "create of the name while its record is kept: exit 1" \
	sh -c "[ $? = 1 ] && grep -q 'lost at a reboot' $D/err && ! grep -q ' $M ' /proc/mounts"
tandemctl -j scratch del rs >$D/del.json
st=$?
ksft_expect_eq "del: exit 0, the lost files reported" \
	"$st:$(jq -r .dropped_files $D/del.json)" "0:$(echo "$show" | jq -r .lost_files)"
ksft_check "del removed the record" sh -c "[ ! -e $D/record/rs ] && ! tandemctl scratch show rs 2>/dev/null"

# ---- tandem.ko unloaded inside a copy ----
mkdir -p $D/out2
tandemctl scratch create rm --size 16M --drain-to $D/out2 --rate 1M >/dev/null
insmod "$KO"
dd if=/dev/urandom of=$TANDEM_SCRATCH_DIR/rm/mnt/ck bs=1048576 count=2 2>/dev/null
t=$(first_tmp $D/out2)
before=$([ -n "$t" ] && [ -e "$t" ] && [ ! -e $D/out2/ck ] && echo in-copy)
rmmod tandem
after=$([ -n "$t" ] && [ -e "$t" ] && [ ! -e $D/out2/ck ] && echo in-copy)
ksft_expect_eq "rmmod tandem fell inside the copy (its temporary there before and after)" \
	"$before $after" "in-copy in-copy"
wait_drained rm 10
ksft_check "the drain finished" test $? -eq 0
ksft_expect_eq "the drained file's sha256 is the written one" \
	"$(sha256sum <$D/out2/ck)" "$(sha256sum <$TANDEM_SCRATCH_DIR/rm/mnt/ck)"
tandemctl scratch del rm >/dev/null
ksft_check "no temporary left; del" \
	sh -c "[ -z \"\$(find $D/out2 -name '*.tandem-drain')\" ] && [ ! -e $D/record/rm ]"
ksft_finish
