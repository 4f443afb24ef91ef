#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The tracker's file table crowded, not full (Documentation/tracker.md, "The
# file table"): a lookup probes at most TANDEM_TRK_FILE_PROBES (512) slots
# from a file's home, so tandemctl never places a file further, and reloads
# the table larger before registering files that would be (tracker_need()'s
# probes_over), although it has slots enough. Here 540 files whose homes
# fall in 24 consecutive slots of a table loaded for 600 files (801 slots)
# are registered: placed in order they take 540 consecutive slots, so at
# least one is 516 or more past its home and the table is over. Chosen
# among 19 990 sparse files of one page (a read inserts one page) by the
# table's own hash, computed here as bpf/tracker.h does, and hard-linked
# into the dataset's folder. Checks: the registration succeeds, reloaded
# larger, every file registered; a job's read of them counts one miss per
# file (each found by the BPF lookup); a job counted before the reload
# keeps its counts. The reload goes to the default table (16 384 files),
# above twice 600, so what is checked is the reload of a crowded table, not
# its doubling (that needs ~250 000 files to choose from). ~2 s.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
ksft_plan 6
[ -x "$T" ] && command -v jq >/dev/null || ksft_skip_rest "crowded table" "needs $T and jq"
[ "$(id -u)" = 0 ] || ksft_skip_rest "crowded table" "needs root (BPF)"
[ -r /sys/kernel/btf/vmlinux ] || ksft_skip_rest "crowded table" "needs /sys/kernel/btf/vmlinux"
PY=$(command -v python3) || ksft_skip_rest "crowded table" "needs python3"
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-crowded-$$
tmp=$(mktemp -d /var/tmp/tandem-crowded-XXXXXX)	# not tmpfs: reads insert pages
cleanup() {
	"$T" tracker unload >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
M=600 NFILES=540 WIDTH=24

"$T" tracker load --max-files $M >/dev/null 2>"$tmp/load.err" ||
	ksft_skip_rest "crowded table" "tracker load: $(head -c 300 "$tmp/load.err")"
mf=$("$T" -j stats | jq -r '.tracker.max_files')
mkdir -p "$tmp/pool" "$tmp/ds" "$tmp/pre"
# the pool, the dataset's 540 chosen by their home in a table of $mf files
# (tandem_trk_file_slots(), tandem_trk_slot_home(), tandem_trk_filter_hash())
chosen=$("$PY" - "$tmp" "$mf" $NFILES $WIDTH <<'EOF'
import os, sys
tmp, mf, want, width = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
M64 = (1 << 64) - 1
def fhash(dev, ino):
    x = (ino ^ (dev << 32) ^ dev) & M64
    x ^= x >> 30
    x = (x * 0xbf58476d1ce4e5b9) & M64
    x ^= x >> 27
    x = (x * 0x94d049bb133111eb) & M64
    x ^= x >> 31
    return x
nslots = mf + mf // 3 + 1
homes = {}
for i in range(20000 - 10):	# the last 10: job pre's dataset
    p = f'{tmp}/pool/f{i}'
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
    os.ftruncate(fd, 4096)
    st = os.fstat(fd)
    os.close(fd)
    kdev = (os.major(st.st_dev) << 20) | os.minor(st.st_dev)
    homes.setdefault((fhash(kdev, st.st_ino) >> 8) % nslots, []).append(p)
best, start = 0, 0
for s in range(nslots):
    n = sum(len(homes.get((s + k) % nslots, [])) for k in range(width))
    if n > best:
        best, start = n, s
picked = [p for k in range(width) for p in homes.get((start + k) % nslots, [])][:want]
for i, p in enumerate(picked):
    os.link(p, f'{tmp}/ds/c{i}')
for i in range(10):
    p = f'{tmp}/pre/p{i}'
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
    os.ftruncate(fd, 4096)
    os.close(fd)
print(len(picked), nslots, start)
EOF
)
read -r got nslots start <<<"$chosen"
ksft_diag "table for $mf files: $nslots slots; $got files with homes in slots $start..$((start + WIDTH - 1))"
[ "${got:-0}" = $NFILES ] || ksft_skip_rest "crowded table" "only ${got:-0} of 20000 files in $WIDTH slots"
[ "$mf" -ge $NFILES ] || ksft_skip_rest "crowded table" "a table of $mf files: not crowded but full"

# a job counted before the reload
"$T" tracker dataset pre "$tmp/pre" >/dev/null 2>&1 &&
	"$T" track -q --name pre --dataset pre -- sh -c "cat $tmp/pre/* >/dev/null"
pre_miss() { "$T" -j stats | jq '[.jobs[] | select(.name == "pre") | .datasets[].miss_pages] | add'; }
ksft_expect_eq "before: job pre missed its 10 pages" "$(pre_miss)" 10

"$T" tracker dataset crowd "$tmp/ds" >/dev/null 2>"$tmp/crowd.err"
rc=$?
mf2=$("$T" -j stats | jq -r '.tracker.max_files')
ksft_diag "tracker dataset crowd: rc $rc, max_files $mf -> $mf2: $(head -c 300 "$tmp/crowd.err")"
ksft_check "the crowded registration succeeds, the table reloaded larger" \
	eval '[ $rc -eq 0 ] && [ "$mf2" -gt "$mf" ] && grep -q "reloaded larger" "$tmp/crowd.err"'
ksft_expect_eq "all $NFILES files registered" \
	"$("$T" -j stats | jq '[.datasets[] | select(.name == "crowd") | .files] | add')" $NFILES
ksft_expect_eq "the reload kept job pre's counts" "$(pre_miss)" 10

"$T" track -q --name J --dataset crowd -- sh -c "cat $tmp/ds/* >/dev/null"
ksft_expect_eq "job J missed one page per file read (each file found by the lookup)" \
	"$("$T" -j stats | jq '[.jobs[] | select(.name == "J") | .datasets[].miss_pages] | add')" $NFILES
ksft_expect_eq "the tracker lost nothing (file lookups that failed, inserts without a word)" \
	"$("$T" -j stats | jq '[.tracker.insert_failed // 0, .tracker.index_too_big // 0] | add')" 0
ksft_finish
