#!/usr/bin/env bash
# Overhead of the page-cache sharing tracker, and of the cachestat peer, on
# cached (page-cache hit) sequential reads, in one run.
#
#   bench/tracker/run.sh [--mib N] [--rounds R] [--passes P] [--dir DIR] [--out DIR]
#
# Two files of N MiB (default 512) are written the same way on DIR (default
# /var/tmp, a block-device filesystem): ds.bin is registered as a dataset,
# other.bin is not. Each round runs three configurations in rotated order:
#   off        nothing attached
#   tracker    tracker loaded; ds.bin's pages loaded by job "loader", read by
#              job "reader" (shared hits: the path a follower job takes)
#   cachestat  the peer (build/bench/cachestat) attached, system-wide
# Before each configuration both files are dropped from the cache and read
# once cold (so both get the folios readahead makes, and in "tracker" the
# pages get their loader), then each is read P times (default 5) by
# build/bench/seqread (1 MiB read() calls), which reports wall-clock and CPU
# (user+system) throughput per pass. BPF programs run in the reader's
# context, so CPU throughput carries their cost and is less disturbed by
# other load on a shared machine. A last phase turns on kernel.bpf_stats to
# report the programs' own run time per GiB read.
#
# Output: a summary table on stdout; per-pass data in OUT (default
# build/bench/tracker-RUN) as passes.tsv (config file round pass GBps cpuGBps).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
mib=512 rounds=5 passes=5 dir=/var/tmp out=
while [ $# -gt 0 ]; do
	case $1 in
	--mib) mib=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--passes) passes=$2; shift ;;
	--dir) dir=$2; shift ;;
	--out) out=$2; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root (BPF, drop caches)" >&2; exit 4; }
for b in tandemctl bench/seqread bench/cachestat; do
	[ -x "$top/build/$b" ] || { echo "run.sh: build/$b missing: run make" >&2; exit 1; }
done

run=$(date +%Y%m%d-%H%M%S)
out=${out:-$top/build/bench/tracker-$run}
work=$(mktemp -d "$dir/tandem-bench.XXXXXX")
mkdir -p "$out"
# private copies: a rebuild of the tree during the run cannot swap binaries
cp "$top/build/tandemctl" "$top/build/bench/seqread" "$top/build/bench/cachestat" "$work/"
T=$work/tandemctl
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-bench-$$
peer_pid=
cleanup() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null && wait "$peer_pid" 2>/dev/null
	"$T" tracker unload 2>/dev/null || true
	echo 0 >/proc/sys/kernel/bpf_stats_enabled
	rm -rf "$work"
}
trap cleanup EXIT

pages=$((mib * 256))
for f in ds other; do
	dd if=/dev/urandom of="$work/$f.bin" bs=1M count="$mib" status=none conv=fsync
done

drop() { dd if="$1" iflag=nocache count=0 status=none; }
cold_read() { # FILE [track args...]: drop and read once (through the job, if any)
	local f=$1
	shift
	drop "$f"
	if [ $# -gt 0 ]; then "$T" track -q "$@" -- "$work/seqread" "$f" 1 >/dev/null
	else "$work/seqread" "$f" 1 >/dev/null; fi
}
measure() { # CONFIG ROUND [track args...]
	local cfg=$1 round=$2 f
	shift 2
	for f in ds other; do
		if [ $# -gt 0 ]; then "$T" track -q "$@" -- "$work/seqread" "$work/$f.bin" "$passes"
		else "$work/seqread" "$work/$f.bin" "$passes"; fi |
			awk -v c="$cfg" -v f="$f" -v r="$round" '{print c "\t" f "\t" r "\t" $2 "\t" $10 "\t" $12}'
	done >>"$out/passes.tsv"
}

setup_tracker() {
	"$T" tracker load --max-pages $((pages * 2)) >/dev/null
	"$T" tracker dataset ds "$work/ds.bin" >/dev/null
	cold_read "$work/ds.bin" --name loader
	cold_read "$work/other.bin"
	"$T" track -q --name reader -- true
}

run_config() { # CONFIG ROUND
	case $1 in
	off)
		cold_read "$work/ds.bin"; cold_read "$work/other.bin"
		measure off "$2" ;;
	tracker)
		setup_tracker
		measure tracker "$2" --job reader
		"$T" tracker unload ;;
	cachestat)
		"$work/cachestat" 3600 >/dev/null 2>"$out/cachestat.attach" &
		peer_pid=$!
		sleep 1
		cold_read "$work/ds.bin"; cold_read "$work/other.bin"
		measure cachestat "$2"
		kill "$peer_pid"; wait "$peer_pid" || true; peer_pid= ;;
	esac
}

printf 'config\tfile\tround\tpass\tGBps\tcpuGBps\n' >"$out/passes.tsv"
configs=(off tracker cachestat)
for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < 3; k++)); do
		run_config "${configs[$(((r + k) % 3))]}" "$r"
	done
done

# the programs' own time: kernel.bpf_stats (adds its own small cost)
bpf_ns() { bpftool prog show | awk -v n="$1" '$0 ~ "name " n " " {for (i = 1; i < NF; i++) if ($i == "run_time_ns") print $(i + 1)}' | head -n 1; }
setup_tracker
echo 1 >/proc/sys/kernel/bpf_stats_enabled
: >"$out/bpf_stats.tsv"
for f in ds other; do
	a=$(bpf_ns trk_tp_read)
	"$T" track -q --job reader -- "$work/seqread" "$work/$f.bin" "$passes" >/dev/null
	b=$(bpf_ns trk_tp_read)
	printf 'tracker\t%s\t%s\n' "$f" "$(awk -v a="$a" -v b="$b" -v p="$passes" -v m="$mib" 'BEGIN {printf "%.0f", (b - a) / (p * m / 1024)}')" >>"$out/bpf_stats.tsv"
done
"$T" tracker unload
"$work/cachestat" 3600 >/dev/null 2>/dev/null &
peer_pid=$!
sleep 1
for f in ds other; do
	a=$(bpf_ns tp_get_pages)
	"$work/seqread" "$work/$f.bin" "$passes" >/dev/null
	b=$(bpf_ns tp_get_pages)
	printf 'cachestat\t%s\t%s\n' "$f" "$(awk -v a="$a" -v b="$b" -v p="$passes" -v m="$mib" 'BEGIN {printf "%.0f", (b - a) / (p * m / 1024)}')" >>"$out/bpf_stats.tsv"
done
kill "$peer_pid"; wait "$peer_pid" || true; peer_pid=
echo 0 >/proc/sys/kernel/bpf_stats_enabled

{
	echo "# bench/tracker/run.sh --mib $mib --rounds $rounds --passes $passes --dir $dir"
	echo "# $(uname -r), $(nproc) cpus, load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# peer attach: $(cat "$out/cachestat.attach")"
	awk -F'\t' '
		FILENAME ~ /bpf_stats/ { bns[$1 "\t" $2] = $3; next }
		FNR == 1 { next }
		{ k = $1 "\t" $2; n[k]++; w[k, n[k]] = $5; c[k, n[k]] = $6 }
		# quantile q of the n[k] values a[k, 1..]
		function qt(a, k, q,   i, j, t, v, m) {
			m = n[k]
			for (i = 1; i <= m; i++) v[i] = a[k, i]
			for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
			i = 1 + q * (m - 1); j = int(i)
			return j < m ? v[j] + (i - j) * (v[j + 1] - v[j]) : v[m]
		}
		END {
			printf "| config | file | passes | GB/s median | CPU GB/s p25 / median / p75 | wall ratio vs off | CPU ratio vs off |\n"
			printf "|---|---|---|---|---|---|---|\n"
			split("off tracker cachestat", cfgs, " "); split("ds other", files, " ")
			for (i = 1; i <= 3; i++) for (j = 1; j <= 2; j++) {
				k = cfgs[i] "\t" files[j]; o = "off\t" files[j]
				printf "| %s | %s | %d | %.3f | %.3f / %.3f / %.3f | %.3f | %.3f |\n", cfgs[i],
					files[j] == "ds" ? "dataset" : "other", n[k], qt(w, k, .5),
					qt(c, k, .25), qt(c, k, .5), qt(c, k, .75),
					qt(w, k, .5) / qt(w, o, .5), qt(c, k, .5) / qt(c, o, .5)
			}
			printf "\n| BPF programs (kernel.bpf_stats) | file | ns per GiB read | share of the read'"'"'s CPU time (off median) |\n"
			printf "|---|---|---|---|\n"
			for (i = 2; i <= 3; i++) for (j = 1; j <= 2; j++) {
				k = cfgs[i] "\t" files[j]
				# CPU ns per GiB without a tracer: 2^30 bytes at the off median CPU GB/s
				printf "| %s | %s | %d | %.2f%% |\n", cfgs[i], files[j] == "ds" ? "dataset" : "other",
					bns[k], 100 * bns[k] / (1073741824 / qt(c, "off\t" files[j], .5))
			}
		}' "$out/passes.tsv" "$out/bpf_stats.tsv"
} | tee "$out/summary.md"
