#!/bin/sh
# Inside the VM rig (busybox sh, cwd /mnt/data); started by bench/steer/capacity.sh,
# which puts steerbench and params.sh in /extra. The DeepMemoryDL capacity
# scenario, one configuration per boot:
#   1. write the dataset (NFILES x FSIZE, zeros, steerbench zeros), sync, drop caches
#   2. start the "model": steerbench hog HOG_MIB (anonymous, touched; no swap)
#   3. CONFIG off: tandem.ko not loaded
#      CONFIG steer: tandem.ko loaded (defaults: steer=1, cxl_node auto = 1),
#        the dataset registered; pages are steered as they enter the cache
#      CONFIG prefetch: as steer, plus `tandemctl prefetch --no-wait ds` started
#        just before the jobs (whole dataset, name order; no rate cap, or
#        --rate PREFETCH_RATE MiB/s when params.sh sets it; with
#        PREFETCH_ORDER=jobs, in the order the jobs first need the files:
#        tandemctl loadgen order --seed 1,2; with PREFETCH_ORDER=learned, the
#        order `tandemctl run` learned in two earlier runs of the same jobs
#        (one epoch each, before the model starts), the measured jobs then
#        run under `tandemctl run --learn-order`, which starts the prefetch)
#   4. two jobs started together: tandemctl loadgen, EPOCHS epochs, independent
#      shuffles (seeds 1 and 2), COMPUTE per 1-file batch
#      CONFIG place: as steer, and the jobs run with MPOL_PREFERRED node 1
#        (steerbench prefer), so the pages they read are allocated there as
#        they enter the cache: steering finds them in place, nothing copied
#        (the bench's jobs only read; a real job's tensors would follow the
#        policy too)
#      CONFIG limits: no model, no module; the two limits of the others,
#        measured in their boot's conditions: the dataset read cold in name
#        order by one `cat` (the store's bandwidth: the disk-bound cold
#        epoch is the dataset's bytes over it), preferring node 1 so that all
#        of it stays cached, then one epoch of both jobs over it (the warm
#        epoch with nothing read from the disk)
#   params.sh may set TOUCH_PCT and STEP_MS (the model writes TOUCH_PCT% of
#   its memory every STEP_MS ms, steerbench hog --touch) and DECODE (CPU
#   each job burns per sample, loadgen --decode)
#   CKPT=node0|cxl (bench/tiering/capacity-kmem.sh's ckpt-* configurations,
#   issue 36): job A also writes a checkpoint of CKSIZE every CKEVERY steps
#   (loadgen --checkpoint-dir: two CKSIZE buffers of its own, the file written
#   in 4 MiB writes and renamed) into a scratch space (tandemctl scratch:
#   a tmpfs bound to that node, CKSCR in size, drained to /mnt/data/ckpt on
#   the disk at CKRATE, a drained file evicted): node0 is a DRAM tmpfs, cxl
#   the scratch tier on the CPU-less node (scratch create's default node).
#   After the jobs the drain is waited for ("C ckpt ...": files drained,
#   seconds after the jobs' end), before the model grows; the scratch is
#   deleted at the end.
#   5. GROW_AT=N: when job A starts epoch N (0-based), the model takes GROW_MIB
#      more, bound to node GROW_BIND (-1: default policy); GROW_AT=end: after
#      the jobs. Where that memory lands is reported by the model itself.
# Lines "C ..." are the results (parsed by the host script): disk sectors read
# from /proc/diskstats, per-node meminfo and numastat, /proc/vmstat counters,
# the jobs' JSON, the dataset's pages per node by move_pages(nodes=NULL).
# PARAMS: another params file (bench/tiering/vm-tiering.sh's one-boot mode:
# one per configuration, the dataset written once, by the first)
# shellcheck source=/dev/null
. "${PARAMS:-/extra/params.sh}"
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
	# CPU ticks of the kernel threads that copy and reclaim (the comm is in
	# parentheses: fields counted from its end)
	echo "C kthreads $1 $(cat /proc/[0-9]*/stat 2>/dev/null | awk '{
		c = $0; sub(/^[0-9]+ \(/, "", c); sub(/\).*/, "", c); split(substr($0, index($0, ") ") + 2), f, " ")
		t = f[12] + f[13]; if (c ~ /^kswapd/) k += t; else if (c ~ /^kworker/) w += t; else if (c ~ /^kcompactd/) m += t }
		END { printf "kswapd_ticks=%d kworker_ticks=%d kcompactd_ticks=%d", k, w, m }')"
	echo "C vmstat $1 $(awk '$1 ~ /^(pgsteal_kswapd|pgsteal_direct|pgscan_kswapd|pgscan_direct|workingset_refault_file|numa_miss|numa_foreign|pgmigrate_success|allocstall_normal|allocstall_dma32|pgdemote_kswapd|pgdemote_direct|pgpromote_success|numa_hint_faults|numa_pages_migrated)$/ {
		printf "%s=%s ", $1, $2 }' /proc/vmstat)"
}

echo "# config $CONFIG: $NFILES files of $FSIZE, model $HOG_MIB MiB, grow $GROW_MIB MiB at $GROW_AT (bind $GROW_BIND), $EPOCHS epochs, compute $COMPUTE"
# zeros: the content does not matter here, and hashing it costs a minute under TCG.
# One process writes them (steerbench zeros: one write(2) of FSIZE per file,
# as dd bs=FSIZE count=1 did, without 640 execs of dd at ~30 ms each under TCG)
if [ ! -e "$D.written" ]; then
mkdir -p "$D"
case $FSIZE in
*[!0-9]*M|M|*[!M]) for i in $(seq 1 "$NFILES"); do
	dd if=/dev/zero of="$D/sample-$(printf %06d "$i").bin" bs="$FSIZE" count=1 2>/dev/null || exit 1
	done ;;
*) w=$($SB zeros "$D" "$NFILES" "${FSIZE%M}") || exit 1
	echo "C dataset_write $w" ;;
esac
echo "$NFILES $FSIZE" >"$D.written"	# beside the dataset: loadgen lists DIR
fi
[ "$(cat "$D.written")" = "$NFILES $FSIZE" ] || { echo "# $D holds another dataset: $(cat "$D.written")"; exit 1; }
sync
echo 3 >/proc/sys/vm/drop_caches
uptime_s() { cut -d' ' -f1 /proc/uptime; }
at() { echo "# at $(uptime_s) s: $*"; }	# where a boot's time goes
at "the dataset on the disk, the cache dropped"
snap start
since() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.2f", b - a }'; }
jobs_report() { # the two jobs' statuses and JSON, then their stderr
	echo "C job A status=$st_A $(cat /tmp/A.json)"
	echo "C job B status=$st_B $(cat /tmp/B.json)"
	cat /tmp/A.err /tmp/B.err
}
pre=
[ "$CONFIG" = place ] && pre="$SB prefer 1 --"
ckargs=	# job A's checkpoint options (CKPT)
job() { # NAME SEED [EPOCHS]: one training job in the background
	x=
	[ "$1" = A ] && x=$ckargs
	# shellcheck disable=SC2086 # $x: options, split
	$pre tandemctl -j loadgen "$D" --epochs "${3:-$EPOCHS}" --order shuffle --seed "$2" \
		--compute "$COMPUTE" ${DECODE:+--decode "$DECODE"} $x --timeline "/tmp/$1.csv" >"/tmp/$1.json" 2>"/tmp/$1.err" &
}
if [ "$CONFIG" = limits ]; then
	s0=$(sectors)
	t0=$(uptime_s)
	# preferring node 1, so the whole dataset stays cached for the warm epoch
	# (node 0 alone cannot hold it; the placement does not change the read)
	$SB prefer 1 -- cat "$D"/* >/dev/null || exit 1
	echo "C limit cold_read sectors=$(($(sectors) - s0)) seconds=$(since "$t0")"
	echo "C dataset_nodes cached $($SB nodes "$D")"
	s0=$(sectors)
	t0=$(uptime_s)
	job A 1 1
	pid_A=$!
	job B 2 1
	pid_B=$!
	wait "$pid_A"; st_A=$?
	wait "$pid_B"; st_B=$?
	echo "C limit warm_epoch sectors=$(($(sectors) - s0)) seconds=$(since "$t0")"
	jobs_report
	[ "$st_A" = 0 ] && [ "$st_B" = 0 ]
	exit
fi
# PREFETCH_ORDER=learned: two runs of the jobs' first epoch (no compute, no
# decode) under `tandemctl run --learn-order`, as a user's earlier runs of
# the same jobs; the first records the order, the second finds it repeated
# (stable). Then the cache is dropped and the bench goes on as for any
# configuration; the measured run finds the stable order and prefetches in it.
if [ "$CONFIG" = prefetch ] && [ "${PREFETCH_ORDER:-}" = learned ]; then
	insmod "$TANDEM_KO" || exit 1
	tandemctl dataset add ds "$D" >/dev/null || exit 1
	t_l=$(uptime_s)
	for k in 1 2; do
		tandemctl -j run --dataset "$D" --no-track --learn-order /tmp/learned --report /tmp/learn$k.json -- \
			tandemctl loadgen "$D" --epochs 1 --order shuffle --seed 1 --compute 0 ::: \
			tandemctl loadgen "$D" --epochs 1 --order shuffle --seed 2 --compute 0 >/dev/null 2>/tmp/learn.err ||
			{ cat /tmp/learn.err; exit 1; }
		echo "C learn run$k $(/usr/bin/jq -c '.read_order | {files_recorded, displacement, stable, saved}' /tmp/learn$k.json)"
	done
	echo "C learn seconds=$(since "$t_l")"
	rmmod tandem || exit 1	# loaded again below, as in every configuration
	sync
	echo 3 >/proc/sys/vm/drop_caches
fi
# tandem.ko before the model: insmod allocates (GFP_KERNEL), and on 6.12 the
# static variant's model leaves node 0 near its min watermark, where that
# allocation OOM-killed the model once (results/scratch.md). The dataset is
# added after, as a user would once the job's memory is in use.
if [ "$CONFIG" != off ]; then
	insmod "$TANDEM_KO" || exit 1
fi
rm -f /tmp/hog.ready
$SB hog "$HOG_MIB" --grow "$GROW_MIB" --bind-grow "$GROW_BIND" --ready /tmp/hog.ready \
	${TOUCH_PCT:+--touch "$TOUCH_PCT" --step-ms "${STEP_MS:-100}"} >/tmp/hog.out 2>&1 &
hog=$!
while [ ! -e /tmp/hog.ready ]; do
	kill -0 $hog 2>/dev/null || { cat /tmp/hog.out; exit 1; }
	sleep 0.2
done
cat /tmp/hog.out
at "the model ready"
# a training model's step time alone, before the jobs: two reports
[ -n "${TOUCH_PCT:-}" ] && sleep 4.5
snap model

if [ "$CONFIG" != off ]; then
	tandemctl dataset add ds "$D" >/dev/null || exit 1
	tandemctl status | sed 's/^/# /'
fi
# PREFETCH_ORDER=jobs: prefetch in the order the two jobs first need the
# files (their cold epoch's shuffles, seeds 1 and 2, position by position)
pforder=
if [ "$CONFIG" = prefetch ] && [ "${PREFETCH_ORDER:-}" = jobs ]; then
	tandemctl loadgen order "$D" --seed 1,2 --epoch 0 >/tmp/order || exit 1
	pforder="--order /tmp/order"
fi
if [ -n "${CKPT:-}" ]; then
	export TANDEM_SCRATCH_DIR=/run/tandem-bench-scratch
	rm -rf /mnt/data/ckpt
	mkdir -p /mnt/data/ckpt
	sync
	ckn=	# cxl: scratch create's default, the CPU-less node
	[ "$CKPT" = node0 ] && ckn="--node 0"
	# shellcheck disable=SC2086 # --node 0 or nothing
	tandemctl scratch create ck --size "$CKSCR" --drain-to /mnt/data/ckpt --rate "$CKRATE" \
		--evict-drained $ckn >/dev/null 2>/tmp/scr.err || { cat /tmp/scr.err; exit 1; }
	sed 's/^/# /' /tmp/scr.err	# its warning, if the node lacks the memory
	ckargs="--checkpoint-dir $TANDEM_SCRATCH_DIR/ck/mnt --checkpoint-size $CKSIZE --checkpoint-every $CKEVERY"
	echo "# checkpoints: job A, $CKSIZE every $CKEVERY steps, to a scratch of $CKSCR on $CKPT ($(tandemctl -j scratch show ck | /usr/bin/jq -r '"node \(.node)"')), drained at $CKRATE"
fi
s0=$(sectors)
t0=$(cut -d' ' -f1 /proc/uptime)
# options before DATASET: `prefetch DATASET --rate R` is refused (see Documentation/results/steering.md, "Problems found")
if [ "${PREFETCH_ORDER:-}" = learned ]; then
	# the jobs as job() runs them, under `tandemctl run`, which prefetches in
	# the learned order from just before their release; B's status is run's
	jc() { echo "exec tandemctl -j loadgen $D --epochs $EPOCHS --order shuffle --seed $2 --compute $COMPUTE ${DECODE:+--decode $DECODE} --timeline /tmp/$1.csv >/tmp/$1.json 2>/tmp/$1.err"; }
	tandemctl -j run --dataset "$D" --no-track --learn-order /tmp/learned --report /tmp/run.json -- \
		sh -c "$(jc A 1)" ::: sh -c "$(jc B 2)" >/dev/null 2>/tmp/run.err &
	pid_A=$!
	true &
	pid_B=$!
else
	[ "$CONFIG" = prefetch ] && { tandemctl prefetch --no-wait ${PREFETCH_RATE:+--rate "${PREFETCH_RATE}M"} $pforder ds || exit 1; }
	job A 1
	pid_A=$!
	job B 2
	pid_B=$!
fi

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
echo "C window t0=$t0 t1=$t1"
jobs_report
at "the jobs done"
snap end
echo "C dataset_nodes end $($SB nodes "$D")"
at "the dataset's pages counted"
[ "$CONFIG" != off ] && echo "C residency $(tandemctl -j residency ds)"
if [ "${PREFETCH_ORDER:-}" = learned ]; then
	cat /tmp/run.err
	echo "C learned_run $(/usr/bin/jq -c '{module: .module, read_order: .read_order, makespan_s: .measured_makespan_s}' /tmp/run.json)"
fi
if [ -n "${CKPT:-}" ]; then
	# the drain: every checkpoint durable on the disk (at most 300 s)
	n=0
	while [ "$(tandemctl -j scratch show ck | /usr/bin/jq -r .pending_files)" != 0 ] && [ $n -lt 3000 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	echo "C ckpt drained=$(find /mnt/data/ckpt -type f -name 'ckpt-*' | wc -l) after_s=$(since "$t1") $(tandemctl -j scratch show ck | /usr/bin/jq -r '"pending_files=\(.pending_files)"')"
	snap drained
fi
if [ "$GROW_AT" = end ]; then
	kill -USR1 $hog
fi
while [ "$GROW_MIB" -gt 0 ] && [ "$(grep -c 'grew by' /tmp/hog.out)" -eq 0 ]; do
	kill -0 $hog 2>/dev/null || break
	sleep 0.2
done
at "the model grown"
snap final
kill $hog
wait $hog
at "the model ended"
if [ -n "${CKPT:-}" ]; then
	tandemctl scratch del ck >/dev/null || tandemctl scratch del ck --force >/dev/null
	rm -rf /mnt/data/ckpt
fi
sed -n '2,$p' /tmp/hog.out
