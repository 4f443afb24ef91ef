#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The tracker on an ImageNet-shaped tree (issue 32): a cold read and a cached
# re-read of the whole tree, tracked against the tracker not loaded, and the
# tracker's kernel memory per cached page and per registered file.
#
#   bench/scale/run.sh [--classes N] [--files M] [--root DIR] [--pairs P]
#                      [--out DIR] [--tandemctl PATH] [--bpf-stats] [--build-only]
#
# --build-only: make (or complete) the tree and stop (bench/scale/calibrate.sh).
#
# Tree: N class folders (default 1000) x M files (default 1281) of 4 KiB,
# sparse (ftruncate: a read puts a zero page in the page cache, an insert the
# tracker sees, and creating them writes no data), under DIR (default
# /var/tmp/tandem-scale/tree-NxM). It is kept: a rerun with the same N and M
# reuses it (DIR/.complete), an interrupted build is completed.
#
# The read is the issue's: `find DIR -type f -print0 | xargs -0 cat`. One
# pair is, in an order that alternates from pair to pair:
#   off      the tracker unloaded; every file's pages dropped
#            (POSIX_FADV_DONTNEED per file), the tree read cold, then again
#            cached
#   tracked  `tandemctl tracker dataset` (loads the tracker sized from the
#            tree and registers it: timed as "register"), pages dropped, the
#            tree read cold by `tandemctl track` (a job), then again cached
#            by another job; then the tracker's maps (`bpftool map show`,
#            bytes_memlock: entries allocated) and its counts
# Each read records the 1-minute load average before it. --bpf-stats turns
# kernel.bpf_stats_enabled on during the tracked cold and cached reads of the
# first pair and records run_cnt and run_time_ns of each tracker program
# (restored after). Results: OUT/reads.tsv, OUT/memory.tsv, OUT/progs.tsv
# (cold), OUT/progs-cached.tsv, and
# OUT/summary.md (medians and ranges, the ratios the issue's goals are in).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
N=1000 M=1281 ROOT= PAIRS=3 OUT= T=$top/build/tandemctl STATS=0 BUILD_ONLY=0
while [ $# -gt 0 ]; do
	case $1 in
	--classes) N=$2; shift ;;
	--files) M=$2; shift ;;
	--root) ROOT=$2; shift ;;
	--pairs) PAIRS=$2; shift ;;
	--out) OUT=$2; shift ;;
	--tandemctl) T=$2; shift ;;
	--bpf-stats) STATS=1 ;;
	--build-only) BUILD_ONLY=1 ;;
	*) echo "usage: $0 [--classes N] [--files M] [--root DIR] [--pairs P] [--out DIR] [--tandemctl PATH] [--bpf-stats] [--build-only]" >&2
	   exit 2 ;;
	esac
	shift
done
ROOT=${ROOT:-/var/tmp/tandem-scale/tree-${N}x$M}
OUT=${OUT:-$top/build/bench/scale-${N}x$M}
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
export TANDEM_TRACKER_DIR=${TANDEM_TRACKER_DIR:-/sys/fs/bpf/tandem-bench-scale}
[ "$(id -u)" = 0 ] || { echo "needs root (BPF, fadvise of every file)" >&2; exit 1; }
for c in "$T" bpftool jq; do
	command -v "$c" >/dev/null || { echo "needs $c" >&2; exit 1; }
done
mkdir -p "$OUT" "$ROOT"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/log"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# ---- the tree: built once, completed if interrupted ----
if [ "$(cat "$ROOT/.complete" 2>/dev/null)" != "$N $M 4096" ]; then
	t0=$(now)
	$PY - "$ROOT" "$N" "$M" <<'EOF' || { echo "tree failed" >&2; exit 1; }
import os, sys
root, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(n):
    p = "%s/c%04d" % (root, d)
    os.makedirs(p, exist_ok=True)
    for f in range(m):
        fd = os.open("%s/%05d" % (p, f), os.O_WRONLY | os.O_CREAT, 0o644)
        if os.fstat(fd).st_size != 4096:
            os.ftruncate(fd, 4096)
        os.close(fd)
EOF
	echo "$N $M 4096" >"$ROOT/.complete"
	log "tree $ROOT: $N x $M files built in $(since "$t0") s"
else
	log "tree $ROOT: $N x $M files, reused"
fi
[ "$BUILD_ONLY" = 1 ] && exit 0
F=$((N * M))

drop() {
	$PY - "$ROOT" <<'EOF'
import os, sys
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        fd = os.open(os.path.join(d, f), os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
EOF
}
READ="find '$ROOT' -type f -print0 | xargs -0 cat >/dev/null"

# one timed read: PAIR VARIANT PHASE CMD...
timed() {
	local pair=$1 var=$2 phase=$3 l t0 s
	shift 3
	l=$(load1)
	t0=$(now)
	"$@" >"$OUT/last.json" 2>>"$OUT/log"
	s=$(since "$t0")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$pair" "$var" "$phase" "$s" "$l" \
		"$(jq -r '.miss_pages // "-"' "$OUT/last.json" 2>/dev/null || echo -)" >>"$OUT/reads.tsv"
	log "pair $pair $var $phase: $s s (load $l)"
}

prog_ids() { bpftool -j prog show | jq -r '.[] | select(.name | startswith("trk_")) | .id' | sort; }

memory() {
	local pair=$1 st name
	st=$("$T" -j tracker status)
	for name in pages files fileinfo filter tasks jobs datasets counts matrix; do
		bpftool -j map show pinned "$TANDEM_TRACKER_DIR/$name" 2>/dev/null |
			jq -r --arg p "$pair" --argjson s "$st" \
			'[$p, .name, .type, .max_entries, .bytes_memlock,
			  $s.tracker.pages_tracked, $s.tracker.files] | @tsv'
	done >>"$OUT/memory.tsv"
}

# each tracker program's name, run_cnt and run_time_ns since its load: IDS
prog_stats() {
	echo "$1" | while read -r id; do
		[ -n "$id" ] && bpftool -j prog show id "$id" |
			jq -r '[.name, .run_cnt // 0, .run_time_ns // 0] | @tsv'
	done
}
# kernel.bpf_stats_enabled around one read of pair 1 (--bpf-stats), and the
# programs' counts before it: PAIR IDS (the tracker's programs)
stats_on() {
	[ "$STATS" = 1 ] && [ "$1" = 1 ] || return 0
	old_stats=$(sysctl -n kernel.bpf_stats_enabled)
	prog_stats "$2" >"$OUT/.stats-before"
	sysctl -q kernel.bpf_stats_enabled=1
}
# restored; each tracker program's run_cnt and run_time_ns during the read
# (the counts since the load less those before it) to OUT/FILE, per run and
# per file read: PAIR IDS FILE
stats_off() {
	[ "$STATS" = 1 ] && [ "$1" = 1 ] || return 0
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	prog_stats "$2" |
		awk -F'\t' -v OFS='\t' -v f="$F" 'NR == FNR { c[$1] = $2; t[$1] = $3; next }
			{ n = $2 - c[$1]; ns = $3 - t[$1]
			  print $1, n, ns, (n > 0 ? int(ns / n) : 0), int(ns / f) }' "$OUT/.stats-before" - >"$OUT/$3"
	rm -f "$OUT/.stats-before"
}

tracked() {
	local pair=$1 l t0 before ids
	l=$(load1)
	t0=$(now)
	before=$(prog_ids)
	"$T" -j tracker dataset scale "$ROOT" >"$OUT/register.json" 2>>"$OUT/log" ||
		{ log "tracker dataset failed"; exit 1; }
	printf '%s\ttracked\tregister\t%s\t%s\t%s\n' "$pair" "$(since "$t0")" "$l" \
		"$(jq -r .files_added "$OUT/register.json")" >>"$OUT/reads.tsv"
	# the programs the load added
	ids=$(comm -13 <(echo "$before") <(prog_ids))
	drop
	stats_on "$pair" "$ids"
	timed "$pair" tracked cold "$T" -j track --name "cold$pair" --dataset scale -- sh -c "$READ"
	stats_off "$pair" "$ids" progs.tsv
	stats_on "$pair" "$ids"
	timed "$pair" tracked cached "$T" -j track --name "cached$pair" --dataset scale -- sh -c "$READ"
	stats_off "$pair" "$ids" progs-cached.tsv
	memory "$pair"
	"$T" tracker unload >/dev/null 2>&1
}

off() {
	"$T" tracker unload >/dev/null 2>&1
	drop
	timed "$1" off cold sh -c "$READ"
	timed "$1" off cached sh -c "$READ"
}

trap '"$T" tracker unload >/dev/null 2>&1' EXIT
"$T" tracker unload >/dev/null 2>&1
: >"$OUT/reads.tsv"
: >"$OUT/memory.tsv"
log "start: $F files, $PAIRS pairs, $(uptime), tandemctl $T"
for p in $(seq "$PAIRS"); do
	if [ $((p % 2)) = 1 ]; then off "$p"; tracked "$p"; else tracked "$p"; off "$p"; fi
done
log "end: $(uptime)"

# ---- summary ----
{
	echo "# bench/scale: $N x $M files ($F), $PAIRS pairs, $(date -u +%F' '%H:%M) UTC"
	echo
	echo "host: $(uname -r), $(nproc) CPUs; load during the reads: $(awk '{print $5}' "$OUT/reads.tsv" | sort -n | sed -n '1p;$p' | paste -sd- )"
	echo
	echo "| read | off: median [range] s | tracked: median [range] s | tracked / off, per pair: median [range] |"
	echo "|---|---|---|---|"
	for phase in cold cached; do
		awk -F'\t' -v ph=$phase '
		function med(a, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		$3 == ph { v[$2, $1] = $4; if ($1 > np) np = $1 }
		END {
			for (p = 1; p <= np; p++) { o[p] = v["off", p]; t[p] = v["tracked", p]; r[p] = t[p] / o[p] }
			mo = med(o, np); mt = med(t, np); mr = med(r, np)
			printf "| %s | %.2f [%.2f-%.2f] | %.2f [%.2f-%.2f] | **%.3f** [%.3f-%.3f] |\n", ph,
				mo, o[1], o[np], mt, t[1], t[np], mr, r[1], r[np]
		}' "$OUT/reads.tsv"
	done
	echo
	awk -F'\t' '$3 == "register" { printf "register (tracker dataset, loads the tracker): %s s, %s files (pair %s, load %s)\n", $4, $6, $1, $5 }' "$OUT/reads.tsv"
	echo
	echo "Kernel memory, pair 1 (bpftool map show: bytes_memlock), after the tracked re-read:"
	echo
	echo "| map | type | max_entries | bytes | per cached page | per registered file |"
	echo "|---|---|---|---|---|---|"
	awk -F'\t' '$1 == 1 { printf "| %s | %s | %s | %s | %.1f | %.1f |\n", $2, $3, $4, $5, $6 ? $5 / $6 : 0, $7 ? $5 / $7 : 0 }' "$OUT/memory.tsv"
	awk -F'\t' '$1 == 1 { if ($2 == "pages") pg = $5; else if ($2 == "files" || $2 == "fileinfo" || $2 == "filter") fl += $5; np = $6; nf = $7 }
		END { printf "\npages tracked %d, files %d: **%.1f B per cached page** (pages), **%.1f B per registered file** (files + fileinfo + filter)\n", np, nf, pg / np, fl / nf }' "$OUT/memory.tsv"
	for f in progs:cold progs-cached:cached; do
		[ -s "$OUT/${f%%:*}.tsv" ] || continue
		echo
		echo "Programs during the tracked ${f#*:} read of pair 1 (kernel.bpf_stats, whole machine):"
		echo
		echo "| program | runs | ns | ns per run | ns per file |"
		echo "|---|---|---|---|---|"
		sort -t$'\t' -k3,3nr "$OUT/${f%%:*}.tsv" | awk -F'\t' '$2 > 0 { printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }'
	done
} >"$OUT/summary.md"
cat "$OUT/summary.md"
