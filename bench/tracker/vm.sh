#!/bin/sh
# bench/tracker/run.sh inside the VM rig: one VM boot per call, whose
# records are appended to OUT on the host; summarise with
# `bench/tracker/run.sh --summary OUT` as on the host.
#
#   bench/tracker/vm.sh --out OUT [--kver KVER] [run.sh options...]
#
# The guest runs Debian's kernel KVER (default: the rig's, the newest
# -amd64 in /lib/modules) under QEMU TCG: its timings are an emulator's, not
# a machine's, and say how the costs compare, not what they are on
# hardware. run.sh gets --dir /mnt/data (the rig's ext4 data disk, not
# throttled here), --bin with the static bench tools, and the image's
# tandemctl as variant "tracker"; default --mib 64 (node 0 has 384 MiB).
# Needs what the rig needs (make, make deps); root.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out='' kver=${KVER:-} args='--mib 64'
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift ;;
	--kver) kver=$2; shift ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) args="$args $1" ;;
	esac
	shift
done
[ -n "$out" ] || { echo "vm.sh: --out OUT is needed" >&2; exit 2; }
for b in seqread cachestat progstat; do
	[ -x "$top/build/bench/$b" ] || { echo "vm.sh: build/bench/$b missing: run make" >&2; exit 1; }
done
mkdir -p "$out"
tmp=$(mktemp -d /tmp/tandem-trkbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/files" "$tmp/logs"
cp "$top/build/bench/seqread" "$top/build/bench/cachestat" "$top/build/bench/progstat" \
	"$top/bench/tracker/run.sh" "$top/bench/tracker/summary.awk" "$tmp/files/"
# shellcheck disable=SC2086
cat >"$tmp/trkbench.sh" <<EOF
sh /extra/run.sh --dir /mnt/data --bin /extra --variant tracker=/usr/bin/tandemctl \
	--out /tmp/trkbench --emit $args
EOF
[ -n "$kver" ] && export KVER="$kver"
VM_LOGDIR=$tmp/logs bash "$top/selftests/vm/run-vm.sh" --script "$tmp/trkbench.sh" \
	--files "$tmp/files" --bps 0 --timeout 1200 --vm-timeout 1300 --quiet || true
log=$tmp/logs/vm/t-trkbench.sh.log
grep -q '^#bench-end' "$log" 2>/dev/null || {
	echo "vm.sh: the VM returned no records; its log:" >&2
	tail -n 40 "$log" "$tmp/logs/vm/console.log" >&2 2>/dev/null
	exit 1
}
grep '^run.sh:' "$log" >&2 || true
# "#bench-file NAME" then its lines; a file already in OUT keeps its header
# (meta.tsv, all of it)
awk -v out="$out" '
	/^#bench-end/ { exit }
	/^#bench-file / { f = out "/" $2; have = (getline line < f) > 0; close(f); first = 1; meta = $2 == "meta.tsv"; next }
	f == "" || (meta && have) { next }
	first && have { first = 0; next }
	{ first = 0; print >> f }
' "$log"
echo "vm.sh: records appended to $out" >&2
