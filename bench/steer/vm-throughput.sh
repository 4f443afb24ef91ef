#!/bin/sh
# Inside the VM rig (busybox sh, cwd /mnt/data); started by bench/steer/throughput.sh,
# which puts steerbench and params.sh in /extra. Each round migrates the same
# cached dataset from node 0 to node 1 three ways, each time from a fresh cold
# read onto node 0 (steer=0 while reading, so nothing moves on insertion):
#   tandem-cli    `tandemctl -j steer bench` (its own wait and timing)
#   tandem-sysfs  `tandemctl steer --no-wait bench`, timed to steer_pending = 0
#   tandem-batch  the same with steer_batch=1 (destination pages allocated in bulk);
#                 tandem-sysfs and tandem-batch take turns going first
#   movepages     mmap + move_pages(2) to node 1 from userspace (the baseline)
# and then the copy alone: as many pages of anonymous memory on node 0
# copied 4 KiB at a time into memory on node 1 (steerbench copy; lines "K").
# Placement before and after each is checked by move_pages(nodes=NULL) and
# node 1's FilePages. Lines "R ROUND METHOD PHASE key=value..." are parsed by
# the host script.
. /extra/params.sh
SB=/extra/steerbench
D=/mnt/data/ds
S=/sys/kernel/tandem
DS=$S/datasets/1

node_kb() { # NODE KEY: kB from the node's meminfo
	awk -v k="$2:" '$3 == k { print $4 }' "/sys/devices/system/node/node$1/meminfo"
}

cold_read() { # the dataset cached on node 0, nothing else of it in memory
	echo 0 >$S/steer
	sync
	echo 3 >/proc/sys/vm/drop_caches
	cat "$D"/* >/dev/null
}

before() { # ROUND METHOD
	echo "R $1 $2 before $($SB nodes "$D")"
	f1_before=$(node_kb 1 FilePages)
}

after() { # ROUND METHOD
	echo "R $1 $2 after $($SB nodes "$D") node1_filepages_delta_kb=$(($(node_kb 1 FilePages) - f1_before))"
}

echo "# steer throughput: kernel $(uname -r), $NFILES files of $SIZE, $ROUNDS rounds"
tandemctl loadgen gen "$D" --files "$NFILES" --size "$SIZE" || exit 1
insmod "$TANDEM_KO" steer=0 || exit 1
tandemctl dataset add bench "$D" >/dev/null || exit 1
tandemctl status | sed 's/^/# /'

for r in $(seq 1 "$ROUNDS"); do
	cold_read
	before "$r" tandem-cli
	echo 1 >$S/steer
	out=$(tandemctl -j steer bench) || { echo "# tandemctl steer failed"; exit 1; }
	echo "J $r tandem-cli $out"
	after "$r" tandem-cli

	# tandem-sysfs and tandem-batch (steer_batch=1) in turn first
	if [ $((r % 2)) = 1 ]; then pair="0 1"; else pair="1 0"; fi
	for batch in $pair; do
		m=tandem-sysfs
		[ "$batch" = 1 ] && m=tandem-batch
		cold_read
		before "$r" $m
		echo "$batch" >/sys/module/tandem/parameters/steer_batch
		echo 1 >$S/steer
		# options before DATASET: `steer DATASET --no-wait` is refused (see Documentation/results/steering.md, "Problems found")
		# (tandemctl's own line, "steering queued", kept off the result line)
		echo "R $r $m result $($SB waitsteer $DS -- sh -c 'tandemctl steer --no-wait bench >/dev/null')"
		after "$r" $m
		echo 0 >/sys/module/tandem/parameters/steer_batch
	done

	cold_read
	before "$r" movepages
	echo "R $r movepages result $($SB movepages --node 1 "$D")"
	after "$r" movepages

	# the copy alone, as many pages, node 0 to node 1 (the page cache
	# dropped first, so node 0 has room for the source)
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo "K $r copy $($SB copy --node 1 $((NFILES * ${SIZE%M})))"
done

# the bytes are still the ones written (every word is checked)
tandemctl loadgen "$D" --epochs 1 --order seq --verify | sed 's/^/# verify: /'
tandemctl residency bench | sed 's/^/# /'
