#!/bin/sh
# A dataset registered with tandem.ko (tandemctl dataset add) is registered
# with a loaded tracker too, and its reads are counted under its name.
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
DIR=${DATA:-/mnt/data}/t51
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-t51
ksft_plan 4

num() { # KEY: the first "KEY":N of stdin
	grep -o "\"$1\":[0-9]*" | head -n 1 | cut -d: -f2
}
cleanup() {
	tandemctl tracker unload 2>/dev/null
	rm -rf "$DIR"
	rmmod tandem 2>/dev/null
}

insmod "$KO" || { ksft_fail "load tandem.ko"; ksft_finish; }
mkdir -p "$DIR"
for i in 1 2 3; do
	dd if=/dev/urandom of="$DIR/f$i" bs=1M count=4 2>/dev/null
done
sync
ksft_check "tracker load" tandemctl tracker load
ksft_check "dataset add (tandem.ko)" tandemctl dataset add t51 "$DIR"
files=$(tandemctl -j tracker status | grep -o '"name":"t51","files":[0-9]*' | cut -d: -f3)
ksft_expect_eq "tracker has the dataset's 3 files" "$files" 3
echo 1 >/proc/sys/vm/drop_caches
before=$(fincore --noheadings --raw --output PAGES "$DIR"/f1 "$DIR"/f2 "$DIR"/f3 | awk '{s += $1} END {print s + 0}')
tandemctl track -q --name R --dataset t51 -- cat "$DIR/f1" "$DIR/f2" "$DIR/f3" >/dev/null
after=$(fincore --noheadings --raw --output PAGES "$DIR"/f1 "$DIR"/f2 "$DIR"/f3 | awk '{s += $1} END {print s + 0}')
miss=$(tandemctl -j stats --job R --dataset t51 | num miss_pages)
ksft_diag "fincore before $before after $after, tracker misses $miss"
ksft_expect_eq "misses = pages the kernel cached" "$miss" "$((after - before))"
cleanup
ksft_finish
