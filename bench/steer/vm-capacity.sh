#!/bin/sh
# Inside the VM rig (busybox sh, cwd /mnt/data); started by bench/steer/capacity.sh,
# which puts steerbench and params.sh in /extra. The DeepMemoryDL capacity
# scenario, one configuration per boot:
#   1. write the dataset (NFILES x FSIZE, zeros, with dd), sync, drop caches
#   2. start the "model": steerbench hog HOG_MIB (anonymous, touched; no swap)
#   3. CONFIG off: tandem.ko not loaded
#      CONFIG steer: tandem.ko loaded (defaults: steer=1, cxl_node auto = 1),
#        the dataset registered; pages are steered as they enter the cache
#      CONFIG prefetch: as steer, plus `tandemctl prefetch --no-wait ds` started
#        just before the jobs (whole dataset, name order; no rate cap, or
#        --rate PREFETCH_RATE MiB/s when params.sh sets it)
#   4. two jobs started together: tandemctl loadgen, EPOCHS epochs, independent
#      shuffles (seeds 1 and 2), COMPUTE per 1-file batch
#   5. GROW_AT=N: when job A starts epoch N (0-based), the model takes GROW_MIB
#      more, bound to node GROW_BIND (-1: default policy); GROW_AT=end: after
#      the jobs. Where that memory lands is reported by the model itself.
# Lines "C ..." are the results (parsed by the host script): disk sectors read
# from /proc/diskstats, per-node meminfo and numastat, /proc/vmstat counters,
# the jobs' JSON, the dataset's pages per node by move_pages(nodes=NULL).
. /extra/params.sh
SB=/extra/steerbench
D=/mnt/data/ds

sectors() { awk '$3 == "vda" { print $6 }' /proc/diskstats; }

snap() { # NAME: per-node memory (MiB) and allocation counters
	for n in 0 1; do
		echo "C snap $1 node$n $(awk '$3 ~ /^(MemFree|FilePages|AnonPages|Active\(file\)|Inactive\(file\)):$/ {
			sub(":", "", $3); sub("\\(", "_", $3); sub("\\)", "", $3); printf "%s=%d ", $3, $4 / 1024 }' \
			/sys/devices/system/node/node$n/meminfo) $(awk '{ printf "%s=%s ", $1, $2 }' \
			/sys/devices/system/node/node$n/numastat)"
	done
	echo "C cpu $1 $(head -n 1 /proc/stat)"
	echo "C vmstat $1 $(awk '$1 ~ /^(pgsteal_kswapd|pgsteal_direct|pgscan_kswapd|pgscan_direct|workingset_refault_file|numa_miss|numa_foreign|pgmigrate_success|allocstall_normal|allocstall_dma32)$/ {
		printf "%s=%s ", $1, $2 }' /proc/vmstat)"
}

echo "# config $CONFIG: $NFILES files of $FSIZE, model $HOG_MIB MiB, grow $GROW_MIB MiB at $GROW_AT (bind $GROW_BIND), $EPOCHS epochs, compute $COMPUTE"
# zeros: the content does not matter here, and hashing it costs a minute under TCG
mkdir -p "$D"
for i in $(seq 1 "$NFILES"); do
	dd if=/dev/zero of="$D/sample-$(printf %06d "$i").bin" bs="$FSIZE" count=1 2>/dev/null || exit 1
done
sync
echo 3 >/proc/sys/vm/drop_caches
snap start
$SB hog "$HOG_MIB" --grow "$GROW_MIB" --bind-grow "$GROW_BIND" --ready /tmp/hog.ready >/tmp/hog.out 2>&1 &
hog=$!
while [ ! -e /tmp/hog.ready ]; do
	kill -0 $hog 2>/dev/null || { cat /tmp/hog.out; exit 1; }
	sleep 0.2
done
cat /tmp/hog.out
snap model

if [ "$CONFIG" != off ]; then
	insmod "$TANDEM_KO" || exit 1
	tandemctl dataset add ds "$D" >/dev/null || exit 1
	tandemctl status | sed 's/^/# /'
fi
s0=$(sectors)
t0=$(cut -d' ' -f1 /proc/uptime)
# options before DATASET: `prefetch DATASET --rate R` is refused (see steering.md)
[ "$CONFIG" = prefetch ] && { tandemctl prefetch --no-wait ${PREFETCH_RATE:+--rate "${PREFETCH_RATE}M"} ds || exit 1; }
job() { # NAME SEED: one training job in the background
	tandemctl -j loadgen "$D" --epochs "$EPOCHS" --order shuffle --seed "$2" \
		--compute "$COMPUTE" --timeline "/tmp/$1.csv" >"/tmp/$1.json" 2>"/tmp/$1.err" &
}
job A 1
pid_A=$!
job B 2
pid_B=$!

if [ "$GROW_AT" != end ]; then
	# the timeline is written through stdio: seen within ~100 iterations
	while ! grep -q "^[0-9]*,$GROW_AT," /tmp/A.csv 2>/dev/null; do
		kill -0 "$pid_A" 2>/dev/null || break
		sleep 0.2
	done
	echo "C grow_at_s $(awk -v t0="$t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime)"
	snap before_grow
	kill -USR1 $hog
fi
wait "$pid_A"
st_A=$?
wait "$pid_B"
st_B=$?
t1=$(cut -d' ' -f1 /proc/uptime)
s1=$(sectors)
echo "C disk_read_sectors $((s1 - s0)) mib=$(((s1 - s0) / 2048)) wall_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
echo "C job A status=$st_A $(cat /tmp/A.json)"
echo "C job B status=$st_B $(cat /tmp/B.json)"
cat /tmp/A.err /tmp/B.err
snap end
echo "C dataset_nodes end $($SB nodes "$D")"
[ "$CONFIG" != off ] && echo "C residency $(tandemctl -j residency ds)"
if [ "$GROW_AT" = end ]; then
	kill -USR1 $hog
fi
while [ "$GROW_MIB" -gt 0 ] && [ "$(grep -c 'grew by' /tmp/hog.out)" -eq 0 ]; do
	kill -0 $hog 2>/dev/null || break
	sleep 0.2
done
snap final
sed -n '2,$p' /tmp/hog.out
kill $hog
wait $hog
