#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A real throttled store on the host: an ext4 image on a loop device, mounted,
# and a cgroup-v1 blkio child cgroup whose blkio.throttle.read_bps_device caps
# the reads its processes issue to that loop device (children inherit the
# cgroup). Documentation/testing.md, "A throttled store on the host".
#
#   loopstore.sh up --size MIB --bps RATE --dir MOUNTPOINT [--name NAME]
#                [--image FILE] [--direct-io on|off]
#   loopstore.sh exec NAME -- CMD [ARG...]   run CMD inside the store's cgroup
#   loopstore.sh path NAME                   the cgroup's directory
#   loopstore.sh throttle NAME RATE          change the cap (0: none)
#   loopstore.sh drop NAME [--remount]       make the store's files cold
#   loopstore.sh status [NAME]
#   loopstore.sh down NAME                   undo everything up did
#
# RATE is bytes/s with an optional K, M or G suffix (binary: 20M = 20 MiB/s).
# NAME defaults to "store". --image FILE: the caller's image, kept by down
# (made and formatted only when it does not exist), so a dataset written once
# survives; by default the image is private and down removes it.
#
# up is safe to rerun (an existing store gets the new cap; a different size
# is refused), down is safe to rerun and also undoes a half-done up: every
# step up takes is recorded in the state file before it is taken, and up
# undoes what it did when it fails or gets SIGINT/SIGTERM/SIGHUP.
set -euo pipefail

STATE_DIR=${LOOPSTORE_STATE:-/run/tandem-loopstore}
IMG_DIR=${LOOPSTORE_IMGDIR:-/var/tmp/tandem-loopstore}
CG_ROOT=${LOOPSTORE_CGROOT:-/sys/fs/cgroup/blkio}
CG_PREFIX=tandem-loopstore-

die() { echo "loopstore: $*" >&2; exit 1; }
note() { echo "loopstore: $*" >&2; }

usage() {
	sed -n '/^#   loopstore.sh/s/^#   //p' "$0" >&2
	exit 2
}

check_name() {
	[[ $1 =~ ^[A-Za-z0-9_.-]{1,32}$ && $1 != . && $1 != .. ]] ||
		die "bad name '$1' (1-32 of A-Z a-z 0-9 _ . -)"
}

# parse_rate RATE: bytes/s on stdout
parse_rate() {
	local v=$1 n m=1
	case $v in
	*[kK]) m=1024; n=${v%?} ;;
	*[mM]) m=1048576; n=${v%?} ;;
	*[gG]) m=1073741824; n=${v%?} ;;
	*) n=$v ;;
	esac
	[[ $n =~ ^[0-9]+([.][0-9]+)?$ ]] || die "bad rate '$v' (bytes/s, suffix K, M or G)"
	awk -v n="$n" -v m="$m" 'BEGIN { printf "%.0f\n", n * m }'
}

state_file() { echo "$STATE_DIR/$1.state"; }

# st_get NAME KEY: the value recorded for KEY (empty if none); the file is
# parsed, never sourced
st_get() {
	local f
	f=$(state_file "$1")
	[ -f "$f" ] || return 0
	awk -v k="$2" 'index($0, k "=") == 1 { v = substr($0, length(k) + 2) } END { print v }' "$f"
}

st_set() { echo "$2=$3" >>"$(state_file "$1")"; }

cg_dir() { echo "$CG_ROOT/$CG_PREFIX$1"; }

# lock: one state-changing command at a time (fd 9 stays open until exit);
# the lock file is never removed, so no two holders can see different files
lock() {
	exec 9>"$STATE_DIR.lock"
	flock -w 60 9 || die "busy (another loopstore.sh holds $STATE_DIR.lock)"
	mkdir -p "$STATE_DIR"
}

need_root() {
	[ "$(id -u)" = 0 ] || die "needs root (losetup, mount, cgroups)"
	[ -w "$CG_ROOT/cgroup.procs" ] || die "no cgroup-v1 blkio controller at $CG_ROOT"
}

# loop_of IMAGE: the loop devices attached to IMAGE
loop_of() { losetup -n -O NAME -j "$1" 2>/dev/null || true; }

loop_majmin() { cat "/sys/block/${1#/dev/}/dev"; }

set_throttle() {
	local name=$1 bps=$2 loop cg
	loop=$(st_get "$name" loop)
	cg=$(cg_dir "$name")
	echo "$(loop_majmin "$loop") $bps" >"$cg/blkio.throttle.read_bps_device"
}

# cg_kill NAME: end every process in the store's cgroup (they were started in
# it by `exec`), TERM first, KILL after 2 s
cg_kill() {
	local cg procs i
	cg=$(cg_dir "$1")
	[ -d "$cg" ] || return 0
	for i in $(seq 50); do
		procs=$(cat "$cg/cgroup.procs" 2>/dev/null || true)
		[ -n "$procs" ] || return 0
		# shellcheck disable=SC2086
		if [ "$i" -le 20 ]; then kill -TERM $procs 2>/dev/null || true
		else kill -KILL $procs 2>/dev/null || true; fi
		sleep 0.1
	done
	note "processes left in $cg: $(tr '\n' ' ' <"$cg/cgroup.procs")"
	return 1
}

# teardown NAME: undo, in reverse, what the state file says was done; also
# finds what a lost state file would have named (the default image's loop
# devices, the cgroup). Returns non-zero when something could not be undone.
teardown() {
	local name=$1 img loop dir cg rc=0 i back
	img=$(st_get "$name" image)
	[ -n "$img" ] || img=$IMG_DIR/$name.img
	loop=$(st_get "$name" loop)
	dir=$(st_get "$name" dir)
	cg=$(cg_dir "$name")
	cg_kill "$name" || rc=1
	if [ -n "$dir" ] && mountpoint -q "$dir" &&
		[ -n "$loop" ] && [ "$(findmnt -n -o SOURCE --target "$dir")" = "$loop" ]; then
		sync -f "$dir" 2>/dev/null || true
		for i in 1 2 3 4 5; do
			umount "$dir" 2>/dev/null && break
			sleep 0.2
		done
		if mountpoint -q "$dir"; then
			note "$dir is busy (held by: $(fuser -m "$dir" 2>/dev/null | tr -s ' ')); lazy unmount, the loop device clears when they exit"
			umount -l "$dir" || rc=1
		fi
	fi
	# detach only loop devices still backed by this store's image
	for loop in $(loop_of "$img") ${loop:+$loop}; do
		[ -e "/sys/block/${loop#/dev/}/loop/backing_file" ] || continue
		back=$(cat "/sys/block/${loop#/dev/}/loop/backing_file")
		[ "$back" -ef "$img" ] || [ "$back" = "$img" ] || continue
		losetup -d "$loop" 2>/dev/null || { note "cannot detach $loop"; rc=1; }
	done
	if [ -d "$cg" ]; then rmdir "$cg" 2>/dev/null || { note "cannot remove $cg"; rc=1; }; fi
	if [ "$(st_get "$name" dir_created)" = 1 ] && [ -d "$dir" ] && ! mountpoint -q "$dir"; then
		rmdir "$dir" 2>/dev/null || note "left $dir (not empty)"
	fi
	if [ "$(st_get "$name" image_owned)" = 1 ] || [ "$img" = "$IMG_DIR/$name.img" ]; then
		rm -f "$img"
		rmdir "$IMG_DIR" 2>/dev/null || true
	fi
	[ $rc -eq 0 ] && rm -f "$(state_file "$name")"
	return $rc
}

cmd_up() {
	local size='' bps='' dir='' name=store img='' dio=on
	while [ $# -gt 0 ]; do
		case $1 in
		--size) size=${2:?}; shift 2 ;;
		--bps) bps=$(parse_rate "${2:?}"); shift 2 ;;
		--dir) dir=${2:?}; shift 2 ;;
		--name) name=${2:?}; shift 2 ;;
		--image) img=${2:?}; shift 2 ;;
		--direct-io) dio=${2:?}; shift 2 ;;
		*) usage ;;
		esac
	done
	[[ $size =~ ^[0-9]+$ && $size -ge 8 ]] || die "--size MIB (at least 8) is required"
	[ -n "$bps" ] || die "--bps RATE is required"
	[ -n "$dir" ] || die "--dir MOUNTPOINT is required"
	[[ $dio = on || $dio = off ]] || die "--direct-io on|off"
	check_name "$name"
	need_root
	lock "$name"
	mkdir -p "$(dirname "$dir")"
	dir=$(realpath -m "$dir")
	if [ -f "$(state_file "$name")" ]; then
		up_again "$name" "$size" "$bps" "$dir"
		return
	fi
	up_new "$name" "$size" "$bps" "$dir" "$img" "$dio"
}

# An existing store: check it is whole and the same, then apply the new cap.
up_again() {
	local name=$1 size=$2 bps=$3 dir=$4 loop img dio
	loop=$(st_get "$name" loop)
	[ "$(st_get "$name" size)" = "$size" ] ||
		die "store $name exists with --size $(st_get "$name" size); run 'down $name' first"
	[ "$(st_get "$name" dir)" = "$dir" ] ||
		die "store $name is mounted at $(st_get "$name" dir), not $dir"
	if [ -z "$loop" ] || ! mountpoint -q "$dir" || [ ! -d "$(cg_dir "$name")" ] ||
		[ "$(findmnt -n -o SOURCE --target "$dir")" != "$loop" ]; then
		note "store $name was half set up; setting it up again"
		img=$(st_get "$name" image)
		dio=$(st_get "$name" dio)
		[ "$(st_get "$name" image_owned)" = 1 ] && img=''
		teardown "$name" || die "cannot undo the half set-up store $name"
		up_new "$name" "$size" "$bps" "$dir" "$img" "${dio:-on}"
		return
	fi
	set_throttle "$name" "$bps"
	st_set "$name" bps "$bps"
	show "$name"
}

# EXIT trap of up: a failure (set -e, die) or a signal undoes what was done
up_exit() {
	local rc=$1
	trap - EXIT INT TERM HUP
	[ "$UP_DONE" = 1 ] && exit "$rc"
	note "up did not finish (status $rc); undoing"
	teardown "$UP_NAME" || true
	exit $((rc ? rc : 1))
}

up_new() {
	local name=$1 size=$2 bps=$3 dir=$4 img=$5 dio=$6 loop cg owned=0
	if [ -z "$img" ]; then
		img=$IMG_DIR/$name.img
		owned=1
	fi
	img=$(realpath -m "$img")
	UP_DONE=0 UP_NAME=$name
	trap 'up_exit $?' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
	: >"$(state_file "$name")"
	st_set "$name" dio "$dio"
	st_set "$name" image "$img"
	st_set "$name" image_owned $owned
	st_set "$name" size "$size"
	st_set "$name" dir "$dir"
	if [ ! -e "$img" ]; then
		[ $owned = 1 ] || st_set "$name" image_owned 1	# made here: ours to remove
		mkdir -p "$(dirname "$img")"
		# allocated, not sparse: reads hit real blocks; no lazy init behind the runs
		fallocate -l "${size}M" "$img"
		mkfs.ext4 -q -F -b 4096 -m 0 -E lazy_itable_init=0,lazy_journal_init=0 "$img"
	elif [ $owned = 1 ]; then
		die "$img exists without a state file: a leftover; run 'down $name' first"
	fi
	[ "$(stat -c %s "$img")" -eq $((size * 1048576)) ] ||
		die "$img is $(stat -c %s "$img") bytes, not --size $size MiB"
	maybe_pause losetup
	# O_DIRECT on the image: its pages are not cached a second time beneath
	# the loop device, so what is cold on the store is read from the disk
	loop=$(losetup -f --show --direct-io="$dio" -b 4096 "$img")
	st_set "$name" loop "$loop"
	if [ ! -d "$dir" ]; then
		mkdir -p "$dir"
		st_set "$name" dir_created 1
	fi
	mountpoint -q "$dir" && die "$dir is already a mount point"
	mount -o noatime "$loop" "$dir"
	maybe_pause mount
	cg=$(cg_dir "$name")
	mkdir -p "$cg"
	set_throttle "$name" "$bps"
	st_set "$name" bps "$bps"
	UP_DONE=1
	show "$name"
}

# Tests stop up at a step to interrupt it there (LOOPSTORE_PAUSE=STEP:SECONDS).
maybe_pause() {
	local p=${LOOPSTORE_PAUSE:-}
	[ "${p%%:*}" = "$1" ] && sleep "${p#*:}"
	return 0
}

show() {
	local name=$1 loop dir cg bps dio procs
	loop=$(st_get "$name" loop)
	dir=$(st_get "$name" dir)
	cg=$(cg_dir "$name")
	bps=$(awk -v d="$(loop_majmin "$loop" 2>/dev/null)" '$1 == d { print $2 }' \
		"$cg/blkio.throttle.read_bps_device" 2>/dev/null)
	dio=$(cat "/sys/block/${loop#/dev/}/loop/dio" 2>/dev/null || echo '?')
	procs=$(wc -l <"$cg/cgroup.procs" 2>/dev/null || echo 0)
	printf '%s: %s (%s, dio %s) on %s, %s MiB, read cap %s B/s (%.1f MiB/s), cgroup %s (%s processes)\n' \
		"$name" "$loop" "$(loop_majmin "$loop" 2>/dev/null || echo '?')" "$dio" "$dir" \
		"$(st_get "$name" size)" "${bps:-none}" \
		"$(awk -v b="${bps:-0}" 'BEGIN { print b / 1048576 }')" "$cg" "$procs"
}

cmd_status() {
	local f n=0
	if [ $# -gt 0 ]; then
		check_name "$1"
		[ -f "$(state_file "$1")" ] || die "no store $1"
		show "$1"
		return
	fi
	for f in "$STATE_DIR"/*.state; do
		[ -f "$f" ] || continue
		show "$(basename "$f" .state)"
		n=$((n + 1))
	done
	[ $n -gt 0 ] || echo "no stores"
}

existing() {
	check_name "$1"
	if [ ! -f "$(state_file "$1")" ] || [ ! -d "$(cg_dir "$1")" ]; then
		die "no store $1 (run up first)"
	fi
}

cmd_exec() {
	local name=${1:-}
	if [ $# -lt 3 ] || [ "$2" != -- ]; then usage; fi
	existing "$name"
	shift 2
	echo $$ >"$(cg_dir "$name")/cgroup.procs"
	exec "$@"
}

cmd_path() {
	existing "${1:-}"
	cg_dir "$1"
}

cmd_throttle() {
	local bps
	[ $# -eq 2 ] || usage
	existing "$1"
	need_root
	lock "$1"
	bps=$(parse_rate "$2")
	set_throttle "$1" "$bps"
	st_set "$1" bps "$bps"
	show "$1"
}

# drop NAME: POSIX_FADV_DONTNEED on every regular file of the store (their
# clean, unmapped pages leave the page cache; nothing else's cache is
# touched, and jobs may keep the files open). --remount: also the store's
# metadata (inodes, dentries, directory blocks), by unmounting and mounting
# it again; refused while anything has a file open there.
cmd_drop() {
	local name=${1:-} dir loop
	existing "$name"
	need_root
	lock "$name"
	dir=$(st_get "$name" dir)
	loop=$(st_get "$name" loop)
	if [ "${2:-}" = --remount ]; then
		umount "$dir" || die "cannot unmount $dir (in use by: $(fuser -m "$dir" 2>/dev/null | tr -s ' '))"
		mount -o noatime "$loop" "$dir"
		return
	fi
	[ $# -eq 1 ] || usage
	find "$dir" -xdev -type f -print0 | /usr/bin/python3 -c '
import os, sys
for p in sys.stdin.buffer.read().split(b"\0"):
    if not p:
        continue
    fd = os.open(p, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
'
}

cmd_down() {
	[ $# -eq 1 ] || usage
	check_name "$1"
	need_root
	lock "$1"
	teardown "$1"
	rmdir "$STATE_DIR" 2>/dev/null || true
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
up) cmd_up "$@" ;;
exec) cmd_exec "$@" ;;
path) cmd_path "$@" ;;
throttle) cmd_throttle "$@" ;;
drop) cmd_drop "$@" ;;
status) cmd_status "$@" ;;
down) cmd_down "$@" ;;
*) usage ;;
esac
