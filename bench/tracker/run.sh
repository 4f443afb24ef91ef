#!/bin/sh
# Overhead of the page-cache sharing tracker, and of the cachestat peer, on
# cached (page-cache hit) sequential reads, and of its insert and evict
# programs on cold reads and drops. POSIX sh: runs on the host and, through
# bench/tracker/vm.sh, in the VM rig's busybox.
#
#   bench/tracker/run.sh [--mib N] [--rounds R] [--first-round K] [--passes P]
#                        [--load idle|busy|both] [--variant NAME=TANDEMCTL]...
#                        [--dir DIR] [--out DIR] [--bin DIR] [--emit] [--no-throughput]
#   bench/tracker/run.sh --summary OUT
#
# Two files of N MiB (default 512) on DIR (default /var/tmp, a block-device
# filesystem): ds.bin is registered as a dataset, other.bin is not. They are
# written once per OUT and kept until --summary. One round is one unit per
# load configuration:
#   idle   nothing else started by the bench
#   busy   a busy loop (seqread --spin) runs meanwhile, so that the figures
#          are not taken from the flattering idle case only
# In each unit the reader configurations run back to back, in an order
# rotated by the round number:
#   off        nothing attached
#   NAME       a tracker (tandemctl given by --variant NAME=PATH, default
#              tracker=build/tandemctl): ds.bin's pages loaded by job
#              "loader", both files then read by job "reader" (the shared-hit
#              path of a follower job, and the path of a tracked process on
#              a file of no dataset), then ds.bin again by job "loader"
#              (file "own": a job re-reading the pages it loaded)
#   cachestat  the peer (seqread's directory's cachestat), system-wide
# Each configuration drops both files and reads them once cold (so both get
# the folios readahead makes, and the tracker's loader loads ds.bin), then
# reads each P times (default 5) with seqread (1 MiB read() calls), which
# reports wall-clock and CPU (user+system) throughput per pass. The BPF
# programs run in the reader's context, so its CPU time carries their cost.
# Then, with kernel.bpf_stats on, each tracker and the peer again: the run
# time and event count of each of their programs while ds.bin is read cold
# (insert), read P times (read), dropped (evict), and the same for
# other.bin. --no-throughput measures only that (to compare builds step
# by step; the summary then has no throughput table, and no shares).
#
# Every unit also records the machine's state: load average, qemu processes,
# the CPU time others used during it (all CPUs' busy time from /proc/stat
# less the bench's own, children included) and the three processes that
# used most of it; a unit is "idle" when others used under 0.1 CPU and no
# qemu ran.
#
# Run one round per call, looped outside, for example under a tool that
# keeps other work off the machine:
#   for r in 0 1 2; do bench/tracker/run.sh --rounds 1 --first-round $r --out O; done
#   bench/tracker/run.sh --summary O
# --summary writes O/summary.md (medians and ranges over rounds) and removes
# the data files. --emit prints the unit's records on stdout (the VM has no
# disk that outlives it; vm.sh collects them). Needs root.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$(cd "$(dirname "$0")" && pwd)
mib=512 rounds=1 first=0 passes=5 load=both dir=/var/tmp out='' bin='' emit=0
variants='' summary='' tput=1
while [ $# -gt 0 ]; do
	case $1 in
	--mib) mib=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--first-round) first=$2; shift ;;
	--passes) passes=$2; shift ;;
	--load) load=$2; shift ;;
	--variant) variants="$variants $2"; shift ;;
	--dir) dir=$2; shift ;;
	--out) out=$2; shift ;;
	--bin) bin=$2; shift ;;
	--emit) emit=1 ;;
	--no-throughput) tput=0 ;;
	--summary) summary=$2; shift ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

if [ -n "$summary" ]; then
	[ -f "$summary/passes.tsv" ] || { echo "run.sh: no $summary/passes.tsv" >&2; exit 1; }
	awk -f "$here/summary.awk" "$summary/meta.tsv" "$summary/machine.tsv" \
		"$summary/passes.tsv" "$summary/cold.tsv" "$summary/stats.tsv" >"$summary/summary.md"
	[ -f "$summary/files" ] && rm -rf "$(cat "$summary/files")" && rm -f "$summary/files"
	cat "$summary/summary.md"
	exit 0
fi

case $load in idle) loads=idle ;; busy) loads=busy ;; both) loads='idle busy' ;;
*) echo "run.sh: --load idle|busy|both" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root (BPF, dropping caches)" >&2; exit 4; }
bin=${bin:-$top/build/bench}
[ -n "$variants" ] || variants="tracker=$top/build/tandemctl"
for b in seqread cachestat progstat; do
	[ -x "$bin/$b" ] || { echo "run.sh: $bin/$b missing: run make" >&2; exit 1; }
done
for v in $variants; do
	[ -x "${v#*=}" ] || { echo "run.sh: ${v#*=} (variant ${v%%=*}) missing" >&2; exit 1; }
done

out=${out:-$top/build/bench/tracker-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$dir/tandem-bench-$(basename "$out")
mkdir -p "$work"
echo "$work" >"$out/files"
# private copies: a rebuild of the tree during the run cannot swap binaries
cp "$bin/seqread" "$bin/cachestat" "$bin/progstat" "$work/"
for v in $variants; do cp "${v#*=}" "$work/ctl-${v%%=*}"; done
S=$work/seqread
pages=$((mib * 256))
bytes=$((mib * 1048576))
for f in ds other; do
	[ -f "$work/$f.bin" ] && [ "$(wc -c <"$work/$f.bin")" -eq "$bytes" ] && continue
	dd if=/dev/urandom of="$work/$f.bin" bs=1048576 count="$mib" 2>/dev/null
	sync
done

pin=/sys/fs/bpf/tandem-bench-$$
spin_pid='' peer_pid='' cur_ctl=''
stop_bg() {
	if [ -n "$spin_pid" ]; then kill "$spin_pid" 2>/dev/null; wait "$spin_pid" 2>/dev/null || true; fi
	if [ -n "$peer_pid" ]; then kill "$peer_pid" 2>/dev/null; wait "$peer_pid" 2>/dev/null || true; fi
	spin_pid='' peer_pid=''
}
cleanup() {
	stop_bg || true
	[ -n "$cur_ctl" ] && TANDEM_TRACKER_DIR=$pin "$cur_ctl" tracker unload >/dev/null 2>&1
	echo 0 >/proc/sys/kernel/bpf_stats_enabled
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- machine state ----

# CPU ticks of all CPUs, busy and total; and the bench's own, children included
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
own_ticks() { sed 's/.*) //' "/proc/$$/stat" | awk '{ print $12 + $13 + $14 + $15 }'; }
# "pid ticks comm" for every process not in the bench's process group
proc_ticks() {
	pg=$(sed 's/.*) //' "/proc/$$/stat" | awk '{ print $3 }')
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v pg="$pg" '{
		pid = $1; c = $0; sub(/^[^(]*\(/, "", c); sub(/\).*$/, "", c); gsub(/ /, "_", c)
		r = $0; sub(/^.*\) /, "", r); split(r, f, " ")
		if (f[3] != pg) print pid, f[12] + f[13], c }'
}
state_begin() {
	st_cpu=$(cpu_ticks) st_own=$(own_ticks) st_load=$(cut -d' ' -f1-3 /proc/loadavg)
	st_t0=$(date +%s)
	proc_ticks >"$work/procs.0"
}
state_end() { # ROUND LOAD
	c1=$(cpu_ticks) o1=$(own_ticks) l1=$(cut -d' ' -f1-3 /proc/loadavg)
	proc_ticks >"$work/procs.1"
	qemu=$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^qemu' || true)
	top3=$(awk 'NR == FNR { t[$1] = $2; next } { d = $2 - (($1 in t) ? t[$1] : 0); if (d > 0) print d, $3 }' \
		"$work/procs.0" "$work/procs.1" | sort -rn | head -n 3 | awk '{ printf "%s%s:%.1fs", (NR > 1 ? "," : ""), $2, $1 / 100 }')
	# shellcheck disable=SC2086
	set -- "$1" "$2" $st_cpu $c1 "$st_own" "$o1"
	# others' CPUs: busy ticks less the bench's own, over the wall time
	awk -v r="$1" -v l="$2" -v b0="$3" -v t0="$4" -v b1="$5" -v t1="$6" -v o0="$7" -v o1="$8" \
		-v q="$qemu" -v top="${top3:--}" -v la0="$st_load" -v la1="$l1" -v s="$(( $(date +%s) - st_t0 ))" 'BEGIN {
		ncpu = 0; while ((getline line < "/proc/stat") > 0) if (line ~ /^cpu[0-9]/) ncpu++
		# ticks per CPU elapsed; the spinner is a waited-for child: in o1
		wall = (t1 - t0) / ncpu; if (wall <= 0) wall = 1
		others = (b1 - b0 - (o1 - o0)) / wall
		if (others < 0) others = 0
		idle = others < 0.1 && q == 0 ? "yes" : "no"
		gsub(/ /, "/", la0); gsub(/ /, "/", la1)
		printf "%s\t%s\t%d\t%.2f\t%d\t%s\t%s\t%s\t%s\n", r, l, s, others, q, la0, la1, top, idle
	}' >>"$out/machine.tsv"
}

# ---- readers ----

# CPU seconds all CPUs were busy (interrupts and kernel threads too)
busy_s() { awk '/^cpu / { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / 100 }' /proc/stat; }
cold() { # ROUND LOAD CFG FILE [tandemctl track args...]: drop, read once
	r=$1 l=$2 c=$3 f=$4
	shift 4
	"$S" --drop "$work/$f.bin"
	b0=$(busy_s)
	if [ $# -gt 0 ]; then "$@" -- "$S" "$work/$f.bin" 1
	else "$S" "$work/$f.bin" 1; fi >"$work/cold.out"
	# the machine's CPU per byte read cold: what inserting a page costs besides
	awk -v r="$r" -v l="$l" -v c="$c" -v f="$f" -v b0="$b0" -v b1="$(busy_s)" \
		'{ s = b1 - b0 - (l == "busy" ? $6 : 0)	# the spinner took one CPU meanwhile
		print r "\t" l "\t" c "\t" f "\t" $10 "\t" $12 "\t" (s > 0 ? $4 / s / 1e9 : 0) }' \
		"$work/cold.out" >>"$out/cold.tsv"
}
passes() { # ROUND LOAD CFG FILE [tandemctl track args...]; FILE "own" reads ds.bin
	r=$1 l=$2 c=$3 f=$4
	shift 4
	p=$f
	[ "$f" = own ] && p=ds
	if [ $# -gt 0 ]; then "$@" -- "$S" "$work/$p.bin" "$passes"
	else "$S" "$work/$p.bin" "$passes"; fi | awk -v r="$r" -v l="$l" -v c="$c" -v f="$f" \
		'{ print r "\t" l "\t" c "\t" f "\t" $2 "\t" $10 "\t" $12 }' >>"$out/passes.tsv"
}

tracker_up() { # TANDEMCTL
	cur_ctl=$1
	TANDEM_TRACKER_DIR=$pin "$1" tracker load --max-pages $((pages * 2)) >/dev/null
	TANDEM_TRACKER_DIR=$pin "$1" tracker dataset ds "$work/ds.bin" >/dev/null
}
tracker_down() {
	TANDEM_TRACKER_DIR=$pin "$cur_ctl" tracker unload >/dev/null
	cur_ctl=''
}
peer_up() {
	"$work/cachestat" 3600 >/dev/null 2>"$out/cachestat.attach" &
	peer_pid=$!
	sleep 1
}
peer_down() {
	kill "$peer_pid"; wait "$peer_pid" || true
	peer_pid=''
}

throughput() { # ROUND LOAD CONFIG
	case $3 in
	off)
		cold "$1" "$2" off ds; cold "$1" "$2" off other
		passes "$1" "$2" off ds; passes "$1" "$2" off other ;;
	cachestat)
		peer_up
		cold "$1" "$2" cachestat ds; cold "$1" "$2" cachestat other
		passes "$1" "$2" cachestat ds; passes "$1" "$2" cachestat other
		peer_down ;;
	*)
		T=$work/ctl-$3
		tracker_up "$T"
		cold "$1" "$2" "$3" ds env TANDEM_TRACKER_DIR="$pin" "$T" track -q --name loader
		cold "$1" "$2" "$3" other
		TANDEM_TRACKER_DIR=$pin "$T" track -q --name reader -- true
		passes "$1" "$2" "$3" ds env TANDEM_TRACKER_DIR="$pin" "$T" track -q --job reader
		passes "$1" "$2" "$3" other env TANDEM_TRACKER_DIR="$pin" "$T" track -q --job reader
		passes "$1" "$2" "$3" own env TANDEM_TRACKER_DIR="$pin" "$T" track -q --job loader
		tracker_down ;;
	esac
}

# ---- the programs' own time ----

snap() { # N: run counters of the programs under test
	if [ -n "$peer_pid" ]; then "$work/progstat" pid "$peer_pid"
	else "$work/progstat" links "$pin"; fi >"$work/snap.$1"
}
delta() { # ROUND LOAD WHO PHASE FILE BYTES A B
	awk -v r="$1" -v l="$2" -v w="$3" -v p="$4" -v f="$5" -v b="$6" 'NR == FNR { c[$1] = $2; t[$1] = $3; next }
		{ print r "\t" l "\t" w "\t" p "\t" f "\t" $1 "\t" $2 - c[$1] "\t" $3 - t[$1] "\t" b }' \
		"$work/snap.$7" "$work/snap.$8" >>"$out/stats.tsv"
}
# the phases, each between two snapshots; $1..$3 = ROUND LOAD WHO, then how
# to run the loading job, the reading job and the loading job again ("" for
# none)
phases() {
	r=$1 l=$2 w=$3 loader=$4 reader=$5 owner=$6
	"$S" --drop "$work/ds.bin" "$work/other.bin"
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	snap 0
	$loader "$S" "$work/ds.bin" 1 >/dev/null
	snap 1
	"$S" "$work/other.bin" 1 >/dev/null
	snap 2
	$reader "$S" "$work/ds.bin" "$passes" >/dev/null
	snap 3
	$reader "$S" "$work/other.bin" "$passes" >/dev/null
	snap 4
	$owner "$S" "$work/ds.bin" "$passes" >/dev/null
	snap 5
	"$S" --drop "$work/ds.bin"
	snap 6
	"$S" --drop "$work/other.bin"
	snap 7
	echo 0 >/proc/sys/kernel/bpf_stats_enabled
	delta "$r" "$l" "$w" insert ds "$bytes" 0 1
	delta "$r" "$l" "$w" insert other "$bytes" 1 2
	delta "$r" "$l" "$w" read ds $((bytes * passes)) 2 3
	delta "$r" "$l" "$w" read other $((bytes * passes)) 3 4
	delta "$r" "$l" "$w" read own $((bytes * passes)) 4 5
	delta "$r" "$l" "$w" evict ds "$bytes" 5 6
	delta "$r" "$l" "$w" evict other "$bytes" 6 7
}
bpf_time() { # ROUND LOAD WHO
	case $3 in
	cachestat)
		peer_up
		phases "$1" "$2" cachestat "" "" ""
		peer_down ;;
	*)
		T=$work/ctl-$3
		tracker_up "$T"
		TANDEM_TRACKER_DIR=$pin "$T" track -q --name reader -- true
		phases "$1" "$2" "$3" "env TANDEM_TRACKER_DIR=$pin $T track -q --name loader --" \
			"env TANDEM_TRACKER_DIR=$pin $T track -q --job reader --" \
			"env TANDEM_TRACKER_DIR=$pin $T track -q --job loader --"
		tracker_down ;;
	esac
}

# ---- the units ----

names=''
for v in $variants; do names="$names ${v%%=*}"; done
# shellcheck disable=SC2086
set -- off $names cachestat
nconf=$#
confs="$*"
if [ ! -f "$out/meta.tsv" ]; then
	printf 'kernel\t%s\ncpus\t%s\nmib\t%s\npasses\t%s\nconfigs\t%s\nvariants\t%s\n' "$(uname -r)" \
		"$(grep -c '^processor' /proc/cpuinfo)" "$mib" "$passes" "$confs" "$variants" >"$out/meta.tsv"
	printf 'round\tload\tconfig\tfile\tpass\tGBps\tcpuGBps\n' >"$out/passes.tsv"
	printf 'round\tload\tconfig\tfile\tGBps\tcpuGBps\tsysGBps\n' >"$out/cold.tsv"
	printf 'round\tload\twho\tphase\tfile\tprog\tcnt\tns\tbytes\n' >"$out/stats.tsv"
	printf 'round\tload\tseconds\tothers_cpus\tqemu\tload_start\tload_end\ttop_others\tidle\n' >"$out/machine.tsv"
fi

unit() { # ROUND LOAD
	state_begin
	if [ "$2" = busy ]; then "$S" --spin & spin_pid=$!; fi
	k=0
	[ "$tput" -eq 1 ] || k=$nconf
	while [ $k -lt "$nconf" ]; do
		# shellcheck disable=SC2086
		set -- "$1" "$2" $confs
		i=$(( (k + $1) % nconf + 3 ))
		eval "c=\${$i}"
		throughput "$1" "$2" "$c"
		k=$((k + 1))
	done
	for c in $names cachestat; do bpf_time "$1" "$2" "$c"; done
	stop_bg
	state_end "$1" "$2"
	tail -n 1 "$out/machine.tsv" | awk -F'\t' '{ printf "run.sh: round %s %s: %s s, others used %s CPUs, qemu %s, load %s -> %s, top %s, idle: %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }' >&2
}

r=$first
while [ "$r" -lt $((first + rounds)) ]; do
	# alternate which load configuration comes first
	if [ $((r % 2)) -eq 0 ]; then ls=$loads; else ls=$(echo "$loads" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }'); fi
	for l in $ls; do unit "$r" "$l"; done
	r=$((r + 1))
done

if [ "$emit" -eq 1 ]; then
	for f in meta machine passes cold stats; do
		echo "#bench-file $f.tsv"
		cat "$out/$f.tsv"
	done
	echo "#bench-end"
fi
