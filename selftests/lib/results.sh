# shellcheck shell=bash
# Shared by the host and VM runners: turn one test program's TAP log and exit
# status into "PASS FAIL SKIP NAME" (counts of test cases).
#   results_line NAME LOG STATUS
results_line() {
	local name=$1 log=$2 status=$3 totals pass fail skip err
	totals=$(grep -a '^# Totals: ' "$log" | tail -n 1)
	if [ -n "$totals" ]; then
		pass=$(sed -n 's/.* pass:\([0-9]*\).*/\1/p' <<<"$totals")
		fail=$(sed -n 's/.* fail:\([0-9]*\).*/\1/p' <<<"$totals")
		skip=$(sed -n 's/.*skip:\([0-9]*\).*/\1/p' <<<"$totals")
		err=$(sed -n 's/.*error:\([0-9]*\).*/\1/p' <<<"$totals")
		fail=$((fail + ${err:-0}))
		# a program that reported no failure but exited badly still failed
		if [ "$status" -ne 0 ] && [ "$status" -ne 4 ] && [ "$fail" -eq 0 ]; then
			fail=1
		fi
	else
		pass=0 fail=0 skip=0
		case $status in
		0) pass=1 ;;
		4) skip=1 ;;
		*) fail=1 ;;
		esac
	fi
	echo "$pass $fail $skip $name"
}
