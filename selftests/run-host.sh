#!/usr/bin/env bash
# Run host tests (executables or .sh scripts given as arguments): one by one,
# or with HOST_JOBS=N those selftests/host/parallel.txt names N at a time.
# Each one's TAP goes to stdout and to build/logs/host/NAME.log; a summary line
# per program goes to build/logs/host.results ("PASS FAIL SKIP NAME").
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/selftests/lib/results.sh"
B=${B:-build}
logdir=$top/$B/logs/host
results=$top/$B/logs/host.results
timeout_s=${HOST_TEST_TIMEOUT:-600}
mkdir -p "$logdir"
: >"$results"
# the device probe's cache (predict, calibrate graph=): in a folder of the
# run's own, not the host's /var/lib/tandem (predict_probe.sh checks the
# default places in folders of its own)
probe_dir=$(mktemp -d /tmp/tandem-probe-XXXXXX)
trap 'rm -rf "$probe_dir"' EXIT
export TANDEM_PROBE_DIR=$probe_dir
# and short: the tests check the probe's format and cache, not its rates
export TANDEM_PROBE_SECONDS=${TANDEM_PROBE_SECONDS:-0.1}
# one test, its TAP to its log; its exit status and seconds to NAME.status
run_test() {
	local t=$1 name log t0 status
	name=$(basename "$t")
	log=$logdir/$name.log
	t0=$(date +%s.%N)
	if [ "${t%.sh}" != "$t" ]; then
		(cd "$top" && timeout -k 5 "$timeout_s" bash "$t") >"$log" 2>&1
	else
		(cd "$top" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
			timeout -k 5 "$timeout_s" "$t") >"$log" 2>&1
	fi
	status=$?
	[ $status -eq 124 ] && echo "# TIMEOUT after ${timeout_s}s" >>"$log"
	echo "$status $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')" \
		>"$logdir/$name.status"
}

# its log on stdout, its line in the results
report_test() {
	local name status secs line
	name=$(basename "$1")
	read -r status secs <"$logdir/$name.status"
	rm -f "$logdir/$name.status"
	echo "# host test: $name"
	sed 's/^/  /' "$logdir/$name.log"
	line=$(results_line "$name" "$logdir/$name.log" "$status")
	echo "$line" >>"$results"
	echo "# => $name: pass/fail/skip $(cut -d' ' -f1-3 <<<"$line") (exit $status, $secs s)"
}

# HOST_JOBS > 1: the tests selftests/host/parallel.txt names first, that many
# at a time (their logs printed in order when all have ended), then the rest
# one by one
jobs=${HOST_JOBS:-1}
serial=("$@")
if [ "$jobs" -gt 1 ] 2>/dev/null; then
	par=() serial=()
	for t in "$@"; do
		if grep -qx "$(basename "$t")" "$top/selftests/host/parallel.txt"; then
			par+=("$t")
		else
			serial+=("$t")
		fi
	done
	n=0
	for t in "${par[@]}"; do
		[ $n -ge "$jobs" ] && wait -n && n=$((n - 1))
		run_test "$t" &
		n=$((n + 1))
	done
	wait
	for t in "${par[@]}"; do
		report_test "$t"
	done
fi
for t in "${serial[@]}"; do
	run_test "$t"
	report_test "$t"
done
awk '{p+=$1; f+=$2; s+=$3} END {printf "host: %d passed, %d failed, %d skipped\n", p, f, s; exit f > 0}' "$results"
