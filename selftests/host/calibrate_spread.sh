#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# calibrate says when a command's warm runs disagree: a loadgen job whose
# second warm run computes twice as long a sample (80 ms against 40 ms)
# gets the warning and a profile whose rates span it; one warm run of the
# same job has nothing to compare and no warning. About 17 s, beside other
# tests (parallel.txt: a temp folder, no tracker, and loadgen sleeps its
# compute, so a busy CPU does not close the 2x gap). The warm runs are
# counted in /proc (--no-track), so the job holds a dataset file open.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
ksft_plan 4
if [ ! -x "$T" ] || ! command -v jq >/dev/null; then
	for i in 1 2 3 4; do ksft_skip "calibrate spread $i" "needs $T and jq"; done
	ksft_finish
fi
tmp=$(mktemp -d /tmp/tandem-spread-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$T" loadgen gen "$tmp/ds" --files 40 --size 1M >/dev/null
# the job: its run number in a file; run 2 is the slow one
cat >"$tmp/job.sh" <<EOS
#!/bin/sh
n=\$(cat "$tmp/count" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$tmp/count"
c=40ms
[ "\$n" = 1 ] && c=80ms
exec "$T" loadgen "$tmp/ds" --epochs 2 --compute \$c --threads 1
EOS
chmod +x "$tmp/job.sh"
cal() {	# RUNS OUT
	rm -f "$tmp/count"
	"$T" calibrate --dataset "$tmp/ds" --sample 0 --bw-time 0.3 --warm-time 20s \
		--warm-runs "$1" --no-contention --no-track -o "$tmp/$2.json" \
		-- "$tmp/job.sh" >"$tmp/$2.out" 2>"$tmp/$2.err"
}
warned() { grep -q "instance A: its [0-9]* warm runs read .* of their median apart" "$tmp/$1.err"; }

cal 3 three
ksft_diag "three runs: $(grep 'warm runs read' "$tmp/three.err" | cut -c1-120)"
[ -s "$tmp/three.json" ] || sed 's/^/# /' "$tmp/three.err" | tail -5
ksft_check "three warm runs, the second at half the speed: calibrate exits 0" \
	test -s "$tmp/three.json"
ksft_check "calibrate warns that the runs' rates are far apart" warned three
ksft_check "the profile's rate range spans the slow run (max / min >= 1.3)" \
	jq -e '.instances[0].warm_run | .rate_max_bps / .rate_min_bps >= 1.3' "$tmp/three.json"
cal 1 one
ksft_check "one warm run: no spread to warn about" \
	bash -c "test -s '$tmp/one.json' && ! grep -q 'of their median apart' '$tmp/one.err'"
ksft_finish
