#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One dataset walk (ctl/lib/files.h, Documentation/tandemctl.md "Datasets:
# which files a DIR is"): on an ImageFolder-style tree with nested class
# folders, hidden files and folders, a symbolic link to a file outside the
# tree, a second name for a file (symbolic and hard link), a link back to a
# class folder, a dangling link and a FIFO, the five commands that take a
# DIR see the same files, and the expected ones (listed here by hand):
#   dataset add --dry-run  the paths themselves (tandem.ko is not needed for
#                          the walk; registering needs it: the VM tests);
#   tracker dataset        files registered with the host's BPF tracker and
#                          their pages in its maps;
#   loadgen                files and bytes it reports, and which files it
#                          really read: fincore over every file of the tree;
#   calibrate              files and bytes of its storage measurement;
#   run                    the report's dataset files and bytes, and the
#                          files and pages the run registered with the tracker.
# File k has its own size (2^k pages less k bytes), so a sum of sizes or
# pages names one set of files.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
N=11
ksft_plan $N
skip_all() { ksft_skip_rest "dataset walk" "$1"; }
[ -x "$T" ] && command -v jq >/dev/null && command -v fincore >/dev/null ||
	skip_all "needs $T, jq and fincore"
tracker_ok=1
[ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] || tracker_ok=0
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-walk-$$
tmp=$(mktemp -d /var/tmp/tandem-walk-XXXXXX)	# not tmpfs: fincore sees what was read
trap '"$T" tracker unload >/dev/null 2>&1; rm -rf "$tmp"' EXIT
tmp=$(realpath "$tmp")
d=$tmp/train
mkdir -p "$d/cat" "$d/dog/puppy/small" "$d/.ipynb_checkpoints" "$d/bird" "$tmp/elsewhere"
k=0
mk() {	# mk PATH: the next size
	k=$((k + 1))
	head -c $(((1 << k) * 4096 - k)) /dev/urandom >"$1"
}
# taken
mk "$d/bird/b0.jpg"; mk "$d/cat/c0.jpg"; mk "$d/cat/c1.jpg"
mk "$d/dog/d0.jpg"; mk "$d/dog/puppy/p0.jpg"; mk "$d/dog/puppy/small/s0.jpg"
mk "$tmp/elsewhere/x0.jpg"
ln -s ../../elsewhere/x0.jpg "$d/cat/x0.jpg"	# a link out of the tree: taken, as its target
# left out
mk "$d/.DS_Store"; mk "$d/.ipynb_checkpoints/c0-checkpoint.jpg"; mk "$d/cat/.c0.jpg.swp"
mk "$tmp/elsewhere/not-linked.jpg"
ln -s c0.jpg "$d/cat/again.jpg"			# same inode as cat/c0.jpg
ln "$d/bird/b0.jpg" "$d/dog/hard.jpg"		# same inode as bird/b0.jpg: the first name is taken
ln -s ../cat "$d/dog/cats"			# cat/ again
ln -s nowhere.jpg "$d/dog/gone.jpg"		# dangling
mkfifo "$d/dog/pipe"				# special: never opened (a read would block)
want=$(printf '%s\n' "$d/bird/b0.jpg" "$d/cat/c0.jpg" "$d/cat/c1.jpg" "$tmp/elsewhere/x0.jpg" \
	"$d/dog/d0.jpg" "$d/dog/puppy/p0.jpg" "$d/dog/puppy/small/s0.jpg")
taken() { printf '%s\n' "$want"; }
NF=$(taken | wc -l)
BYTES=$(taken | xargs stat -c %s | awk '{ s += $1 } END { print s }')
PAGES=$(taken | xargs stat -c %s | awk '{ p += int(($1 + 4095) / 4096) } END { print p }')
ksft_diag "tree: $NF files to take, $BYTES bytes, $PAGES pages"
# every file in the tree and outside it, by stat (no link followed twice)
all=$(find "$tmp" -type f | sort)

# 1-2: dataset add --dry-run: the very paths, the skips named
"$T" -j dataset add --dry-run walk "$d" >"$tmp/add.json" 2>"$tmp/add.err"
ksft_expect_eq "dataset add --dry-run: the expected paths, in walk order" \
	"$(jq -r '.paths[]' "$tmp/add.json" 2>/dev/null)" "$want"
ksft_expect_eq "dataset add --dry-run: files, bytes and skips" \
	"$(jq -c '[.files, .bytes, .skipped]' "$tmp/add.json" 2>/dev/null)" \
	"[$NF,$BYTES,{\"hidden\":3,\"special\":1,\"dangling\":1,\"duplicates\":2,\"dirs_again\":1}]"

# 3-4: loadgen: what it says, and what it read (fincore, cold before; a
# file is its inode: a hard link's other name shares its pages)
sync "$tmp"/elsewhere/* "$d"/*/* "$d"/.DS_Store 2>/dev/null; sync
for f in $all; do dd if="$f" iflag=nocache count=0 status=none; done
cold=$(fincore -b -n -o PAGES $all | awk '{ p += $1 } END { print p + 0 }')
"$T" -j loadgen "$d" --epochs 1 >"$tmp/lg.json" 2>"$tmp/lg.err"
ksft_expect_eq "loadgen: files and bytes" \
	"$(jq -c '[.files, .dataset_bytes, .bytes]' "$tmp/lg.json" 2>/dev/null)" "[$NF,$BYTES,$BYTES]"
read_set=$(for f in $all; do
	[ "$(fincore -b -n -o PAGES "$f" | awk '{ print $1 + 0 }')" -gt 0 ] && stat -c %i "$f"
done | sort -u)
ksft_diag "cached before loadgen: $cold pages; read: $(for f in $all; do
	[ "$(fincore -b -n -o PAGES "$f" | awk '{ print $1 + 0 }')" -gt 0 ] && echo "${f#"$tmp"/}"; done | tr '\n' ' ')"
ksft_check "loadgen read exactly the expected files (fincore, cold before)" \
	test "$cold" = 0 -a "$read_set" = "$(taken | xargs stat -c %i | sort -u)"

# 5: calibrate's storage measurement
"$T" -j calibrate --dataset "$d" --bw-time 0.2 -o "$tmp/p.json" >"$tmp/cal.json" 2>"$tmp/cal.err"
ksft_expect_eq "calibrate: files and bytes" \
	"$(jq -c '[.files, .dataset_bytes]' "$tmp/cal.json" 2>/dev/null)" "[$NF,$BYTES]"

# 6-8: run (with the tracker where it can load), then tracker dataset
"$T" -j run --dataset "$d" --stagger 0 --report "$tmp/r.json" -- true ::: true >/dev/null 2>"$tmp/run.err"
rc=$?
ksft_expect_eq "run: report's dataset files and bytes" \
	"$rc $(jq -c '[.dataset_files, .dataset_bytes]' "$tmp/r.json" 2>/dev/null)" "0 [$NF,$BYTES]"
if [ $tracker_ok = 1 ]; then
	ksft_expect_eq "run: files and pages registered with the tracker" \
		"$(jq -c '[.tracker.files_added + .tracker.files_present, .tracker.pages]' "$tmp/r.json")" \
		"[$NF,$PAGES]"
	"$T" tracker unload >/dev/null 2>&1
	"$T" -j tracker dataset walk "$d" >"$tmp/td.json" 2>"$tmp/td.err"
	ksft_expect_eq "tracker dataset: files added, skips" \
		"$(jq -c '[.files_added, .files_present, .skipped.hidden, .skipped.duplicates]' "$tmp/td.json" 2>/dev/null)" \
		"[$NF,0,3,2]"
	"$T" -j tracker status >"$tmp/ts.json" 2>/dev/null
	ksft_expect_eq "tracker dataset: its files and pages in the tracker's maps" \
		"$(jq -c '.datasets[] | select(.name == "walk") | [.files, .size_pages]' "$tmp/ts.json" 2>/dev/null)" \
		"[$NF,$PAGES]"
else
	ksft_skip "run: files and pages registered with the tracker" "needs root and BTF"
	ksft_skip "tracker dataset: files added, skips" "needs root and BTF"
	ksft_skip "tracker dataset: its files and pages in the tracker's maps" "needs root and BTF"
fi

# 10: one file named explicitly is taken whatever its name; a missing path is an error
"$T" -j dataset add --dry-run one "$d/.DS_Store" "$d/cat" >"$tmp/one.json" 2>/dev/null
ksft_expect_eq "an explicit hidden file is taken, then the folder's files" \
	"$(jq -r '.paths | length' "$tmp/one.json" 2>/dev/null)" 4
out=$("$T" loadgen "$tmp/missing" 2>&1)
ksft_check "a missing DIR: exit 1, one error naming it ($out)" \
	eval '[ "$("$T" loadgen "$tmp/missing" >/dev/null 2>&1; echo $?)" = 1 ] && grep -q missing <<<"$out"'
ksft_finish
