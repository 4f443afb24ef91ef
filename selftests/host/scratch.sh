#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tandemctl scratch (Documentation/scratch.md) on this host's node 0: the tmpfs
# as /proc/mounts has it (no huge= on a node with CPUs, huge=always with
# --pages huge where the kernel has THP); every drained file's sha256 equals what was written,
# drained in the order the files were closed; the rate cap; a kill -9 of the
# drainer mid-copy leaves each destination file a complete version (old or new),
# show reports what is pending, and a restart drains the rest, a file open for
# writing only once closed; del while draining refuses, --force reports what it
# dropped; --evict-drained; run --scratch; --profile; a full scratch gives the
# writer ENOSPC; a drain folder the owner cannot write refuses create; an
# unprivileged user can neither create nor read another's scratch, and an
# owner's drainer runs as the owner; a reboot mid-drain (simulated: the
# drainer killed, the tmpfs unmounted, its /run state removed) leaves the
# durable record, which show, list and del report; bad input is one line and
# exit 1 or 2; a scratch larger than its node's memory is made with a warning.
# Needs root (mount); about 11 s.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
if [ "$(id -u)" != 0 ] || [ ! -x "$T" ] || ! command -v jq >/dev/null || ! command -v setpriv >/dev/null; then
	ksft_plan 1
	ksft_skip "scratch" "needs root, $T, jq and setpriv"
	ksft_finish
fi
tmp=$(mktemp -d /tmp/tandem-scratch-XXXXXX)
chmod 755 "$tmp"
export TANDEM_SCRATCH_DIR=$tmp/state TANDEM_SCRATCH_RECORD_DIR=$tmp/record
# on every way out: each scratch's drainer (by its recorded pid) and mount
holder=
cleanup() {
	local d pid
	[ -n "$holder" ] && kill "$holder" && wait "$holder"
	for d in "$TANDEM_SCRATCH_DIR"/*/; do
		[ -d "$d" ] || continue
		pid=$(cat "$d/drainer.pid" 2>/dev/null)
		[ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = tandem-drain ] && kill -9 "$pid"
		mountpoint -q "$d/mnt" && umount "$d/mnt"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
ksft_plan 47

# as_nobody CMD...: run CMD as nobody:nogroup, no supplementary groups
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
pending() { "$T" -j scratch show "$1" 2>/dev/null | jq -r .pending_files; }
# wait_drained NAME SECONDS: until nothing is pending; 0 when so
wait_drained() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(pending "$1")" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
# same_sums DIR_A DIR_B: the same files (hidden ones too) with the same sha256
sums() { (cd "$1" && find . -type f | sort | xargs -r sha256sum); }
mnt() { echo "$TANDEM_SCRATCH_DIR/$1/mnt"; }

# ---- create, the mount, the drain ----
mkdir -p "$tmp/d1" "$tmp/d2" "$tmp/d3" "$tmp/d4" "$tmp/d5" "$tmp/d8"
"$T" scratch create s1 --node 0 --size 64M --drain-to "$tmp/d1" >"$tmp/out" 2>"$tmp/err"
# (a busy host may have less than 64 MiB free, but never less free memory and page cache)
ksft_check "create --node 0: exit 0, one line, no 'short of memory' warning" \
	sh -c "test $? -eq 0 && test \$(wc -l <'$tmp/out') -eq 1 && ! grep -q 'short of memory' '$tmp/err'"
opts=$(awk -v m="$(mnt s1)" '$2 == m && $3 == "tmpfs" { print $4 }' /proc/mounts)
ksft_diag "mount options: $opts"
ksft_check "the tmpfs: size=64M, mpol=bind:0, mode 0700 (/proc/mounts)" \
	sh -c "echo '$opts' | grep -q 'size=65536k' && echo '$opts' | grep -q 'mpol=bind:0' &&
	       echo '$opts' | grep -q 'mode=700'"
# small pages by default on a node with CPUs (scratch.md, "Huge pages"), and show says so
ksft_check "a node with CPUs: no huge= in the mount options, show's huge_pages false" \
	sh -c "case '$opts' in *huge=*) false ;; esac &&
	       [ \"\$('$T' -j scratch show s1 | jq -r .huge_pages)\" = false ]"
M=$(mnt s1)
mkdir "$M/inst0"
# a first file in the new folder, drained before the others are written: once
# it is, the drainer watches inst0 (a file closed in a folder before its watch
# is queued by the folder's scan, not in the order of close: scratch.md)
echo first >"$M/inst0/f0.bin"
echo inst0/f0.bin >>"$tmp/order"
wait_drained s1 10
t0=$(date +%s)
for i in 1 2 3 4 5 6; do
	sub=$([ $((i % 2)) = 0 ] && echo inst0/ || echo)
	head -c $((i * 300000 + 17)) /dev/urandom >"$M/${sub}f$i.bin"
	echo "${sub}f$i.bin" >>"$tmp/order"
done
wait_drained s1 10
ksft_check "6 more files drained within 10 s" test $? -eq 0
# before anything reads them back: the drainer drops each copy from the page
# cache once it is fsync'ed (a tmpfs destination keeps its pages: no check)
if [ "$(stat -f -c %T "$tmp/d1")" = tmpfs ]; then
	ksft_skip "the drained copies are not left in the page cache" "the drain folder is on tmpfs"
else
	res=$(find "$tmp/d1" -type f -name 'f*.bin' -exec fincore --bytes --noheadings --output RES {} + |
		awk '{ s += $1 } END { print s + 0 }')
	ksft_expect_eq "the drained copies are not left in the page cache (fincore: resident bytes)" "$res" 0
fi
ksft_expect_eq "every drained file's sha256 equals the written one" "$(sums "$tmp/d1")" "$(sums "$M")"
"$T" -j scratch show s1 >"$tmp/show.json"
ksft_expect_eq "show: 7 drained, 0 pending, 7 copies durable" \
	"$(jq -r '[.drained_files, .pending_files, .durable_files] | join(" ")' "$tmp/show.json")" "7 0 7"
last=$(jq -r '.last_durable | floor' "$tmp/show.json")
ksft_check "show: the last durable time is after the writes began ($last >= $t0)" test "$last" -ge "$t0"
# durable times in the order the files were closed
times=$(while read -r f; do jq -r --arg p "$f" '.files[] | select(.path == $p) | .durable' "$tmp/show.json"; done <"$tmp/order")
ksft_check "drained in the order of close (durable times non-decreasing)" \
	sh -c "echo '$times' | sort -g -c"

# ---- rate cap, kill -9 mid-drain, restart ----
"$T" scratch create s2 --node 0 --size 64M --drain-to "$tmp/d2" --rate 2M >/dev/null
M2=$(mnt s2)
for f in a b c; do head -c 1M /dev/urandom >"$M2/$f"; done
wait_drained s2 10
for f in a b c; do sha256sum <"$M2/$f" >"$tmp/old.$f"; done
for f in a b c; do head -c 2M /dev/urandom >"$M2/$f"; sha256sum <"$M2/$f" >"$tmp/new.$f"; done
# kill it while a copy is half written: its temporary file has bytes
for i in $(seq 100); do [ -n "$(find "$tmp/d2" -name '*.tandem-drain' -size +0)" ] && break; sleep 0.03; done
pid=$(cat "$TANDEM_SCRATCH_DIR/s2/drainer.pid")
kill -9 "$pid"
half=$(find "$tmp/d2" -name '*.tandem-drain' -size +0)
ksft_check "the kill came mid-copy (a half-written temporary: ${half##*/})" test -n "$half"
sleep 0.2
torn=
for f in a b c; do
	s=$(sha256sum <"$tmp/d2/$f")
	[ "$s" = "$(cat "$tmp/old.$f")" ] || [ "$s" = "$(cat "$tmp/new.$f")" ] || torn="$torn $f"
done
ksft_expect_eq "kill -9 mid-drain: each file is its old or its new complete version" "$torn" ""
"$T" -j scratch show s2 >"$tmp/show2.json"
p=$(jq -r .pending_files "$tmp/show2.json")
pb=$(jq -r .pending_bytes "$tmp/show2.json")
ksft_check "show after the kill: drainer 0, $p files pending (>= 2 at 2 MiB/s)" \
	test "$(jq -r .drainer_pid "$tmp/show2.json")" = 0 -a "$p" -ge 2
"$T" scratch show s2 | grep -q "drainer not running"
ksft_check "show's text says the drainer is not running" test $? -eq 0
start=$(date +%s.%N)
"$T" scratch drain s2 >"$tmp/out" 2>&1
ksft_check "scratch drain: restarted, exit 0" test $? -eq 0
wait_drained s2 10
el=$(echo "$(date +%s.%N) - $start" | bc)
ksft_expect_eq "after the restart every file is its new version" \
	"$(for f in a b c; do sha256sum <"$tmp/d2/$f"; done)" "$(cat "$tmp/new.a" "$tmp/new.b" "$tmp/new.c")"
ksft_expect_eq "no temporary file left in the destination" "$(find "$tmp/d2" -name '*.tandem-drain')" ""
# pb bytes at 2 MiB/s, a burst of one 256 KiB chunk
ksft_check "the rate cap: $pb bytes drained in ${el}s, >= 0.8 x at 2 MiB/s" \
	sh -c "[ \$(echo '$el >= 0.8 * ($pb - 262144) / 2097152' | bc) = 1 ]"

# a file still open for writing when the drainer restarts is not final: left for its close
kill -9 "$(cat "$TANDEM_SCRATCH_DIR/s2/drainer.pid")"
(exec 3>"$M2/held"; head -c 100000 /dev/urandom >&3; sleep 1.5) &
holder=$!
sleep 0.3
"$T" scratch drain s2 >/dev/null
sleep 0.5
ksft_check "a file open for writing at the restart is not drained, it is pending" \
	test ! -e "$tmp/d2/held" -a "$(pending s2)" = 1
wait $holder
holder=
wait_drained s2 5
ksft_check "... and is drained once closed" cmp -s "$M2/held" "$tmp/d2/held"

# ---- del while draining ----
head -c 4M /dev/urandom >"$M2/big"
sleep 0.2
"$T" scratch del s2 >"$tmp/out" 2>"$tmp/err"
st=$?
ksft_check "del while draining: refused, exit 1, one line naming the undrained file count" \
	sh -c "[ $st = 1 ] && [ \$(wc -l <'$tmp/err') = 1 ] && grep -q '1 files .* not drained' '$tmp/err'"
ksft_check "the refused del left the mount and the drainer" \
	sh -c "mountpoint -q '$M2' && [ \"\$('$T' -j scratch show s2 | jq -r .drainer_pid)\" != 0 ]"
pid=$(cat "$TANDEM_SCRATCH_DIR/s2/drainer.pid")
"$T" -j scratch del s2 --force >"$tmp/del.json" 2>"$tmp/err"
ksft_expect_eq "del --force: exit 0, reports big as dropped" \
	"$?:$(jq -r '.dropped | map(.path) | join(",")' "$tmp/del.json")" "0:big"
ksft_check "del --force: unmounted, the drainer gone, no temporary file left" \
	sh -c "! mountpoint -q '$M2' && { [ ! -d /proc/$pid ] || [ \"\$(cut -d' ' -f3 /proc/$pid/stat)\" = Z ]; } &&
	       [ -z \"\$(find '$tmp/d2' -name '*.tandem-drain')\" ]"

# ---- a reboot mid-drain: what the durable record says ----
"$T" scratch create s8 --node 0 --size 16M --drain-to "$tmp/d8" --rate 2M >/dev/null
M8=$(mnt s8)
mkdir "$tmp/src8"
for f in a b c; do head -c 1M /dev/urandom >"$tmp/src8/$f"; done
for f in a b c; do cp "$tmp/src8/$f" "$M8/$f"; done
for i in $(seq 100); do [ -n "$(find "$tmp/d8" -name '*.tandem-drain' -size +0)" ] && break; sleep 0.02; done
# the reboot: the drainer and /run go (the record under $TANDEM_SCRATCH_RECORD_DIR stays)
kill -9 "$(cat "$TANDEM_SCRATCH_DIR/s8/drainer.pid")"
sleep 0.1
umount "$M8" && rm -rf "$TANDEM_SCRATCH_DIR/s8"
want=$(for f in a b c; do cmp -s "$tmp/src8/$f" "$tmp/d8/$f" 2>/dev/null || echo "$f 1048576"; done)
"$T" -j scratch show s8 >"$tmp/lost.json"
ksft_expect_eq "after a reboot mid-drain show reports lost_at_reboot and each file queued, not durable" \
	"$(jq -r '"\(.lost_at_reboot) \(.lost_files)", (.files[] | "\(.path) \(.bytes)")' "$tmp/lost.json")" \
	"true $(echo "$want" | wc -l)
$want"
ksft_check "... list marks it lost, its text says so" \
	sh -c "[ \"\$('$T' -j scratch list | jq -r '.[] | select(.name == \"s8\") | .lost_at_reboot')\" = true ] &&
	       '$T' scratch show s8 | grep -q 'lost at a reboot'"
as_nobody "$T" scratch show s8 >/dev/null 2>"$tmp/err"
ksft_check "nobody's show of root's lost scratch: exit 1, one line (the journal is 0600)" \
	sh -c "[ $? = 1 ] && [ \$(wc -l <'$tmp/err') = 1 ]"
"$T" scratch drain s8 >/dev/null 2>"$tmp/err"
ksft_check "drain of a lost scratch: exit 1, one line" \
	sh -c "[ $? = 1 ] && [ \$(wc -l <'$tmp/err') = 1 ] && grep -q 'lost at a reboot' '$tmp/err'"
"$T" scratch create s8 --node 0 --size 1M --drain-to "$tmp/d8" >/dev/null 2>"$tmp/err"
ksft_check "create of its name: refused while the record is kept, nothing left" \
	sh -c "[ $? = 1 ] && grep -q 'lost at a reboot' '$tmp/err' && [ ! -e '$TANDEM_SCRATCH_DIR/s8' ]"
"$T" -j scratch del s8 >"$tmp/del8.json"
ksft_check "del: exit 0, the lost files reported, the record gone" \
	sh -c "[ $? = 0 ] && [ \"\$(jq -r .dropped_files '$tmp/del8.json')\" = $(echo "$want" | wc -l) ] &&
	       [ ! -e '$TANDEM_SCRATCH_RECORD_DIR/s8' ] && ! '$T' scratch show s8 2>/dev/null"

# ---- --evict-drained, run --scratch ----
"$T" scratch create s3 --node 0 --size 16M --drain-to "$tmp/d3" --evict-drained --pages huge \
	>/dev/null
opts=$(awk -v m="$(mnt s3)" '$2 == m && $3 == "tmpfs" { print $4 }' /proc/mounts)
# huge=always where the kernel has THP; without THP create mounts without it
if [ -d /sys/kernel/mm/transparent_hugepage ]; then huge=true; else huge=false; fi
ksft_check "--pages huge: huge=always in the mount options exactly where the kernel has THP ($huge)" \
	sh -c "case '$opts' in *huge=always*) $huge ;; *) ! $huge ;; esac &&
	       [ \"\$('$T' -j scratch show s3 | jq -r .huge_pages)\" = $huge ]"
head -c 1M /dev/urandom >"$tmp/e"
cp "$tmp/e" "$(mnt s3)/e"
for i in $(seq 50); do [ -e "$(mnt s3)/e" ] || break; sleep 0.1; done
ksft_check "--evict-drained: the file leaves scratch once durable, its copy intact" \
	sh -c "[ ! -e '$(mnt s3)/e' ] && cmp -s '$tmp/e' '$tmp/d3/e'"
"$T" loadgen gen "$tmp/ds" --files 2 --size 4K >/dev/null
"$T" run --dataset "$tmp/ds" --scratch s3 --no-track --no-register --stagger 0 -- \
	sh -c 'echo "$TANDEM_SCRATCH" >"$TANDEM_SCRATCH/where"' ::: \
	sh -c 'echo "$TANDEM_SCRATCH" >"$TANDEM_SCRATCH/where"' >/dev/null 2>&1
for i in $(seq 50); do [ -e "$tmp/d3/B/where" ] && [ -e "$tmp/d3/A/where" ] && break; sleep 0.1; done
ksft_expect_eq "run --scratch: each instance's TANDEM_SCRATCH is its folder, drained" \
	"$(cat "$tmp/d3/A/where" "$tmp/d3/B/where" 2>&1)" "$(mnt s3)/A
$(mnt s3)/B"
# --profile: a quarter of the profile's B(1)
"$T" calibrate --dataset "$tmp/ds" --sample 0 --rate 100M -o "$tmp/prof.json" >/dev/null 2>&1
"$T" scratch create s7 --node 0 --size 1M --drain-to "$tmp/d5" --profile "$tmp/prof.json" >/dev/null
ksft_expect_eq "--profile: the cap is B(1)/4 of the profile's storage.bandwidth_bps" \
	"$("$T" -j scratch show s7 | jq -r '.rate_bps | round')" \
	"$(jq -r '.storage.bandwidth_bps[0] / 4 | round' "$tmp/prof.json")"
"$T" scratch del s7 >/dev/null
# a scratch of all but 16 MiB of node 0's memory (more than its free memory and
# page cache: the kernel's own memory is more than 16 MiB): made, with a warning
# that a full one leaves the node short (tmpfs pages are not reclaimable
# without swap); more than the node's memory is refused
n0=$(awk '/MemTotal/ { print int($4 / 1024) - 16 }' /sys/devices/system/node/node0/meminfo)
"$T" scratch create s9 --node 0 --size "${n0}M" --drain-to "$tmp/d5" >/dev/null 2>"$tmp/err"
ksft_check "create of node 0's memory less 16 MiB ($n0 MiB): exit 0, one warning line naming node 0 and OOM" \
	sh -c "test $? -eq 0 && test \$(wc -l <'$tmp/err') -eq 1 &&
	       grep -q '^tandemctl: warning: scratch s9: .* on node 0, which has .* short of memory .*OOM-kill' '$tmp/err'"
ksft_diag "$(cat "$tmp/err")"
"$T" scratch del s9 >/dev/null
"$T" scratch create s9 --node 0 --size $((2 * n0))M --drain-to "$tmp/d5" >/dev/null 2>"$tmp/err"
ksft_check "create of twice that: refused, exit 1, one line 'more than node 0's memory', nothing left" \
	sh -c "test $? -eq 1 && test \$(wc -l <'$tmp/err') -eq 1 && grep -q \"more than node 0's memory\" '$tmp/err' &&
	       ! '$T' scratch show s9 >/dev/null 2>&1"

# ---- privilege ----
as_nobody "$T" scratch create x --node 0 --size 1M --drain-to "$tmp/d4" >"$tmp/out" 2>"$tmp/err"
ksft_check "nobody cannot create: exit 1, 'needs root'" \
	sh -c "[ $? = 1 ] && grep -q 'needs root' '$tmp/err' && [ ! -e '$TANDEM_SCRATCH_DIR/x' ]"
ksft_check "nobody cannot list or read root's scratch files" \
	sh -c "! setpriv --reuid=nobody --regid=nogroup --clear-groups ls '$M' >/dev/null 2>&1 &&
	       ! setpriv --reuid=nobody --regid=nogroup --clear-groups cat '$M/f1.bin' >/dev/null 2>&1"
as_nobody "$T" scratch show s1 >/dev/null 2>"$tmp/err"
ksft_check "nobody's show of root's scratch: exit 1, one line" \
	sh -c "[ $? = 1 ] && [ \$(wc -l <'$tmp/err') = 1 ]"
chown nobody:nogroup "$tmp/d4"
SUDO_UID=65534 SUDO_GID=65534 "$T" scratch create s4 --node 0 --size 8M --drain-to "$tmp/d4" >/dev/null
as_nobody sh -c "head -c 100000 /dev/urandom >'$(mnt s4)/mine'"
wait_drained s4 5
ksft_check "an owner's scratch: the drainer runs as the owner, the copy is the owner's" \
	sh -c "[ \"\$(stat -c %U '$tmp/d4/mine')\" = nobody ] && cmp -s '$(mnt s4)/mine' '$tmp/d4/mine' &&
	       [ \$(awk '/^Uid/ {print \$2}' /proc/\$(cat '$TANDEM_SCRATCH_DIR/s4/drainer.pid')/status) = 65534 ]"
# a full scratch: the writer gets ENOSPC, what was written stays
as_nobody sh -c "head -c 10M /dev/zero >'$(mnt s4)/big'" 2>"$tmp/err"
ksft_check "a full scratch: the writer gets ENOSPC; the drained file is still intact" \
	sh -c "grep -q 'No space left' '$tmp/err' && cmp -s '$(mnt s4)/mine' '$tmp/d4/mine'"
mkdir -p "$tmp/rootonly"
SUDO_UID=65534 SUDO_GID=65534 "$T" scratch create s6 --node 0 --size 1M --drain-to "$tmp/rootonly" \
	>/dev/null 2>"$tmp/err"
ksft_check "a drain folder the owner cannot write to: refused, exit 1, nothing left" \
	sh -c "[ $? = 1 ] && grep -q 'owner cannot write' '$tmp/err' && [ ! -e '$TANDEM_SCRATCH_DIR/s6' ] &&
	       ! grep -q '$TANDEM_SCRATCH_DIR/s6' /proc/mounts"

# ---- bad input: one line, then the usage for exit 2 ----
# bad NAME RC GREP ARGS...: exit RC, the first stderr line matches GREP, (exit 1: the only line)
bad() {
	local name=$1 rc=$2 want=$3 st
	shift 3
	"$T" scratch create "$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ $st = "$rc" ] && head -1 "$tmp/err" | grep -q -- "$want" && [ ! -s "$tmp/out" ] &&
		{ [ "$rc" = 2 ] || [ "$(wc -l <"$tmp/err")" = 1 ]; }; then
		ksft_pass "$name"
	else
		ksft_diag "exit $st; $(head -c 300 "$tmp/err")"
		ksft_fail "$name"
	fi
}
bad "size 0: exit 2" 2 "bad value '0' for --size" s5 --node 0 --size 0 --drain-to "$tmp/d5"
bad "--pages big: exit 2" 2 "bad value 'big' for --pages" s5 --node 0 --size 1M --pages big \
	--drain-to "$tmp/d5"
bad "a missing drain folder: exit 1" 1 "drain-to .*No such file" s5 --node 0 --size 1M --drain-to "$tmp/none"
bad "a duplicate name: exit 1" 1 "exists already" s1 --node 0 --size 1M --drain-to "$tmp/d5"
bad "a node that is not there: exit 1" 1 "not an online memory node" s5 --node 63 --size 1M --drain-to "$tmp/d5"
if ls -d /sys/devices/system/node/node* | while read -r n; do [ -z "$(cat "$n/cpulist")" ] && echo x; done | grep -q x; then
	ksft_skip "no --node and no CPU-less node: refused" "this host has a CPU-less node"
else
	bad "no --node and no CPU-less node: exit 1" 1 "no CPU-less (CXL) memory node" s5 --size 1M --drain-to "$tmp/d5"
fi
ksft_finish
