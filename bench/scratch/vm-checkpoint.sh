#!/bin/sh
# shellcheck shell=sh disable=SC1091
# Inside the VM rig (busybox sh, cwd /mnt/data; node 1 is dax/kmem or CXL
# memory in a lower tier); started by bench/scratch/checkpoint.sh with
# /extra/params.sh. One loadgen job (EPOCHS epochs of a cold dataset on the
# throttled disk, COMPUTE per step) in four cases, REPS times, the cases'
# order rotated per repetition:
#   none   no checkpoints
#   disk   checkpoints written straight to the disk (/mnt/data/ckpt-a)
#   dram   to a DRAM tmpfs (a scratch with --node 0: small pages), drained to the disk
#   cxl    to Tandem's scratch on the CPU-less node (huge pages), drained to the disk
#   cxl4k  the same with create --pages small (4 KiB pages, no huge=always)
#   dramhuge  dram with create --pages huge
# CASES (params.sh) names the cases, default none disk dram cxl.
# Each case starts with the caches dropped and the disk synced. Lines:
#   R case=C rep=N total_s= steps= n= stall_med= stall_max= copy_med= after_s=
#     (after_s: from the job's end until every checkpoint is durable: the
#     drain for dram/cxl, a sync for disk)
#   C case=C rep=N step= stall_s= copy_s= copy_new_s=   one per checkpoint
#   L case=C rep=N size= lag_s=                   dram/cxl: durable - mtime
#     per drained file, from drained.log
. /extra/params.sh
export TANDEM_SCRATCH_DIR=/run/tandem-bench-scratch
DS=/mnt/data/ds
now() { cut -d' ' -f1 /proc/uptime; }
echo "E kernel=$(uname -r) nproc=$(nproc) bps=$BPS files=$NFILES size=$FSIZE epochs=$EPOCHS compute=$COMPUTE ckpt=$CKSIZE every=$EVERY rate=$RATE"
for n in /sys/devices/system/node/node*; do
	echo "E node ${n##*node} cpus='$(cat "$n/cpulist")' $(grep MemTotal "$n/meminfo" | awk '{print $3 "=" $4}')kB"
done
tandemctl loadgen gen $DS --files "$NFILES" --size "$FSIZE" || exit 1

# job CASE REP [DIR]
job() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	if [ -n "${3:-}" ]; then
		tandemctl -j loadgen $DS --epochs "$EPOCHS" --compute "$COMPUTE" --threads 2 \
			--checkpoint-dir "$3" --checkpoint-size "$CKSIZE" --checkpoint-every "$EVERY"
	else
		tandemctl -j loadgen $DS --epochs "$EPOCHS" --compute "$COMPUTE" --threads 2
	fi >/tmp/job.json || { echo "# job $1 failed"; return 1; }
	T_END=$(now)
	jq -r --arg c "$1" --arg r "$2" '.checkpoints // [] | .[] |
		"C case=\($c) rep=\($r) step=\(.step) stall_s=\(.stall_s) copy_s=\(.copy_s) copy_new_s=\(.copy_new_s)"' /tmp/job.json
	JOBLINE=$(jq -r --arg c "$1" --arg r "$2" '"R case=\($c) rep=\($r) total_s=\(.total_s) steps=\(.samples) n=\(.checkpoint_count // 0) stall_med=\(.checkpoint_stall_median_s // 0) stall_max=\(.checkpoint_stall_max_s // 0) copy_med=\(.checkpoint_copy_median_s // 0) copy_new_med=\(.checkpoint_copy_new_median_s // 0) measure_s=\(.checkpoint_measure_s // 0) wait_s=\(.wait_s)"' /tmp/job.json)
}

# scratch_case CASE REP [--node 0]
scratch_case() {
	c=$1 r=$2
	shift 2
	dst=/mnt/data/ckpt-$c
	rm -rf "$dst"
	mkdir -p "$dst"
	tandemctl scratch create "b$c" --size "$SCRSIZE" --drain-to "$dst" --rate "$RATE" \
		--evict-drained "$@" >/dev/null 2>/tmp/scr.err || { sed 's/^/# /' /tmp/scr.err; return 1; }
	set -- "$c" "$r"
	job "$1" "$2" "$TANDEM_SCRATCH_DIR/b$1/mnt" || { tandemctl scratch del "b$1" --force; return 1; }
	pend=1
	while [ "$pend" != 0 ]; do
		pend=$(tandemctl -j scratch show "b$1" | jq -r .pending_files)
		sleep 0.1
	done
	after=$(echo "$(now) $T_END" | awk '{ printf "%.3f", $1 - $2 }')
	echo "$JOBLINE after_s=$after drained=$(find "$dst" -type f -name 'ckpt-*' | wc -l)"
	awk -v c="$1" -v r="$2" '{ printf "L case=%s rep=%s size=%s lag_s=%.3f\n", c, r, $2, $1 - $3 }' \
		"$TANDEM_SCRATCH_DIR/b$1/drained.log"
	tandemctl scratch del "b$1" >/dev/null
	rm -rf "$dst"
}

disk_case() {
	dst=/mnt/data/ckpt-disk
	rm -rf "$dst"
	mkdir -p "$dst"
	job disk "$1" "$dst" || return 1
	sync
	after=$(echo "$(now) $T_END" | awk '{ printf "%.3f", $1 - $2 }')
	echo "$JOBLINE after_s=$after drained=$(find "$dst" -type f -name 'ckpt-*' | wc -l)"
	rm -rf "$dst"
}

run_case() {
	case $1 in
	none) job none "$2" && echo "$JOBLINE after_s=0 drained=0" ;;
	disk) disk_case "$2" ;;
	dram) scratch_case dram "$2" --node 0 ;;
	cxl) scratch_case cxl "$2" ;;
	cxl4k) scratch_case cxl4k "$2" --pages small ;;
	dramhuge) scratch_case dramhuge "$2" --node 0 --pages huge ;;
	esac
}

st=0
for rep in $(seq 1 "$REPS"); do
	order=${CASES:-none disk dram cxl}
	i=1
	while [ $i -lt "$rep" ]; do	# rotate: rep 2 starts with disk, ...
		order="$(echo "$order" | cut -d' ' -f2-) $(echo "$order" | cut -d' ' -f1)"
		i=$((i + 1))
	done
	for c in $order; do
		echo "# rep $rep case $c: load $(cut -d' ' -f1-3 /proc/loadavg)"
		run_case "$c" "$rep" || st=1
	done
done
exit $st
