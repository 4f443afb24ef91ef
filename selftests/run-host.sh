#!/usr/bin/env bash
# Run host tests (executables or .sh scripts given as arguments) one by one.
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
for t in "$@"; do
	name=$(basename "$t")
	log=$logdir/$name.log
	echo "# host test: $name"
	t0=$(date +%s.%N)
	if [ "${t%.sh}" != "$t" ]; then
		(cd "$top" && timeout -k 5 "$timeout_s" bash "$t") >"$log" 2>&1
	else
		(cd "$top" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
			timeout -k 5 "$timeout_s" "$t") >"$log" 2>&1
	fi
	status=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
	[ $status -eq 124 ] && echo "# TIMEOUT after ${timeout_s}s" >>"$log"
	sed 's/^/  /' "$log"
	line=$(results_line "$name" "$log" "$status")
	echo "$line" >>"$results"
	echo "# => $name: pass/fail/skip $(cut -d' ' -f1-3 <<<"$line") (exit $status, $secs s)"
done
awk '{p+=$1; f+=$2; s+=$3} END {printf "host: %d passed, %d failed, %d skipped\n", p, f, s; exit f > 0}' "$results"
