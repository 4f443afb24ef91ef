#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo, part 4: the scratch tier (Documentation/scratch.md) on this host.
# A 256 MiB checkpoint (4 MiB writes, as a serializer's buffer) written
#   store        to the durable store and fsync'ed: the job waits until it is durable
#   store-nosync to the durable store without fsync (what torch.save does): the
#                job waits for the page cache only, durable whenever writeback runs
#   scratch      to a `tandemctl scratch` (tmpfs bound to the memory node),
#                drained to the same store by its drainer: the job waits for
#                memory only, and `scratch show` says when the copy is durable
# REPS rounds, the order rotated; the store is a folder on this host's disk
# (/var/tmp). The scratch goes on the CXL node (the largest CPU-less node in a
# lower tier); on a host without one it goes on node 0 with --node 0, which
# it says: that is a DRAM tmpfs, what the tier exists to avoid on a CXL host.
#
#   scripts/demo-scratch.sh [--out DIR] [--reps N]  (default build/demo/scratch, 5)
#
# Needs root (mount); exits 3 saying what is missing. About 40 s.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/demo-lib.sh"
B=${B:-build}
T=$top/$B/tandemctl
out=$top/$B/demo/scratch reps=5 mib=256
PART="scratch tier, 256 MiB checkpoint"
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift ;;
	--reps) reps=$2; shift ;;
	*) echo "demo-scratch.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
demo_need_base
[ "$(id -u)" = 0 ] || need "needs root (scratch create mounts a tmpfs)"
rm -rf "$out"
mkdir -p "$out"
W=$(mktemp -d /var/tmp/tandem-demo-scratch-XXXXXX)
export TANDEM_SCRATCH_DIR=$W/state
trap '"$T" scratch del demo --force >/dev/null 2>&1; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)
mkdir -p "$W/store"
echo "### the scratch tier: a $mib MiB checkpoint to the durable store ($W/store, this host's disk) and to a scratch"
echo "# $(demo_load)"
node=()
if ! "$T" scratch create demo --size $((mib * 2))M --drain-to "$W/store" --rate 200M >"$out/create.txt" 2>&1; then
	if grep -q "no CPU-less" "$out/create.txt"; then
		echo "# this host has no CPU-less (CXL) memory node: the scratch goes on node 0 (--node 0), DRAM"
		node=(--node 0)
		"$T" scratch create demo --size $((mib * 2))M --drain-to "$W/store" --rate 200M "${node[@]}" \
			>"$out/create.txt" 2>&1 || { cat "$out/create.txt"; need "scratch create failed: $(tail -n 1 "$out/create.txt")"; }
	else
		cat "$out/create.txt"
		need "scratch create failed: $(tail -n 1 "$out/create.txt")"
	fi
fi
M=$TANDEM_SCRATCH_DIR/demo/mnt
"$T" scratch list | sed 's/^/# /'
now() { date +%s.%N; }
pending() { "$T" -j scratch show demo | jq .pending_bytes; }
write() { # write CASE N: prints the seconds the writer waited (and, for scratch, until durable)
	local a b d
	sync
	a=$(now)
	case $1 in
	store) dd if=/dev/zero of="$W/store/ckpt-$2" bs=4M count=$((mib / 4)) conv=fsync status=none ;;
	store-nosync) dd if=/dev/zero of="$W/store/ckpt-$2" bs=4M count=$((mib / 4)) status=none ;;
	scratch) dd if=/dev/zero of="$M/ckpt-$2" bs=4M count=$((mib / 4)) status=none ;;
	esac
	b=$(now)
	if [ "$1" = scratch ]; then
		while [ "$(pending)" != 0 ]; do sleep 0.1; done
		d=$("$T" -j scratch show demo | jq .last_durable)
		rm -f "$M/ckpt-$2"
		echo "$(echo "$b - $a" | bc) $(echo "$d - $a" | bc)"
	else
		echo "$b - $a" | bc
	fi
}
cases=(store scratch store-nosync)
for rep in $(seq "$reps"); do
	for k in 0 1 2; do
		c=${cases[$(((k + rep - 1) % 3))]}
		read -r s d <<<"$(write "$c" "$rep")"
		echo "$c $s ${d:-}" >>"$out/times.txt"
		printf '%s  %-13s waited %6.2f s%s\n' "$rep" "$c" "$s" "${d:+, durable after $(printf %.2f "$d") s (the drainer)}"
	done
done
mapfile -t SC < <(awk '$1 == "scratch" { print $2 }' "$out/times.txt")
mapfile -t SD < <(awk '$1 == "scratch" { print $3 }' "$out/times.txt")
mapfile -t ST < <(awk '$1 == "store" { print $2 }' "$out/times.txt")
mapfile -t SN < <(awk '$1 == "store-nosync" { print $2 }' "$out/times.txt")
read -r sdm sdlo sdhi <<<"$(demo_stats "${SD[@]}")"
read -r snm snlo snhi <<<"$(demo_stats "${SN[@]}")"
echo "scratch: durable after median $sdm s [$sdlo-$sdhi] (the drainer's copy, fsync'ed); store without fsync: the writer waited $snm s [$snlo-$snhi], durable only when writeback runs"
demo_compare "writer's wait, scratch" "${SC[@]}" -- "write + fsync to the store" "${ST[@]}" >"$out/compare.txt"
cat "$out/compare.txt"
read -r scm _ _ <<<"$(demo_stats "${SC[@]}")"
read -r stm _ _ <<<"$(demo_stats "${ST[@]}")"
demo_row "$PART${node[*]:+ (node 0)}" "waits $scm s, durable at $sdm s" \
	"store+fsync $stm s, no fsync $snm s" "$DEMO_GAIN"
echo "# $(demo_load); the scratch part took $(($(date +%s) - t0)) s"
