#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# calibrate without the tracker counts a job's reads in /proc from its first
# open of a dataset file, which fanotify reports (lib/openwatch.h). The job
# (loadgen: 20 files of 1 MiB, one each 100 ms, a queue of one) holds each
# file open well under a millisecond; a poll of /proc/PID/fd alone almost
# never finds one open, and calibrate failed it with 'read too little'.
# Checked: the run is measured, from its first read, at loadgen's 10 MiB/s;
# without CAP_SYS_ADMIN, one line says that fanotify is missing. About 10 s,
# beside other tests (parallel.txt: a temp folder, no tracker; loadgen
# sleeps its compute).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
ksft_plan 4
if [ ! -x "$T" ] || ! command -v jq >/dev/null || [ "$(id -u)" != 0 ]; then
	for i in 1 2 3 4; do ksft_skip "calibrate in /proc $i" "needs root, $T and jq"; done
	ksft_finish
fi
tmp=$(mktemp -d /tmp/tandem-calproc-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$T" loadgen gen "$tmp/ds" --files 20 --size 1M >/dev/null
cal() {	# OUT [PREFIX...]
	local out=$1
	shift
	"$@" "$T" calibrate --dataset "$tmp/ds" --sample 0 --bw-time 0.3 --warm-time 20s \
		--warm-runs 1 --no-contention --no-track -o "$tmp/$out.json" \
		-- "$T" loadgen "$tmp/ds" --epochs 2 --compute 100ms --threads 1 --queue 1 \
		>"$tmp/$out.out" 2>"$tmp/$out.err"
}
wr() { jq -r ".instances[0].warm_run.$1" "$tmp/fan.json"; }

cal fan
[ -s "$tmp/fan.json" ] || sed 's/^/# /' "$tmp/fan.err" | tail -5
ksft_diag "warm run: method $(wr method 2>/dev/null), first read $(wr first_read_s 2>/dev/null) s, rate $(wr rate_min_bps 2>/dev/null) B/s"
ksft_check "a job that holds each file open under a millisecond: calibrated in /proc" \
	bash -c "test -s '$tmp/fan.json' && [ \"\$(jq -r '.instances[0].warm_run.method' '$tmp/fan.json')\" = proc ]"
ksft_check "... from its first read (within 0.1 s of its release)" \
	jq -e '.instances[0].warm_run.first_read_s | . >= 0 and . <= 0.1' "$tmp/fan.json" >/dev/null
ksft_check "... at loadgen's rate, 10 MiB/s within 10 %" \
	jq -e '.instances[0].warm_run.rate_min_bps / 10485760 | . >= 0.9 and . <= 1.1' "$tmp/fan.json" >/dev/null
if command -v setpriv >/dev/null; then
	cal nocap setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin
	ksft_check "without CAP_SYS_ADMIN: one line says fanotify is missing" \
		test "$(grep -c 'calibrate: fanotify: .*CAP_SYS_ADMIN' "$tmp/nocap.err")" = 1
else
	ksft_skip "without CAP_SYS_ADMIN: one line says fanotify is missing" "no setpriv"
fi
ksft_finish
