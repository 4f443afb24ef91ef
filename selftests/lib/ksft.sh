# shellcheck shell=sh
# kselftest-style TAP for shell tests (POSIX sh: runs under busybox in the VM
# and bash on the host). Usage:
#   . ksft.sh; ksft_plan 3; ksft_pass "x"; ksft_fail "y"; ksft_skip "z" "why"; ksft_finish
# ksft_finish prints the "# Totals:" line and exits 0 (all passed), 4 (all
# skipped) or 1 (any failure).
KSFT_N=0 KSFT_PASS=0 KSFT_FAIL=0 KSFT_SKIP=0
ksft_plan() { KSFT_PLAN=$1; echo "TAP version 13"; echo "1..$1"; }
ksft_pass() { KSFT_N=$((KSFT_N + 1)); KSFT_PASS=$((KSFT_PASS + 1)); echo "ok $KSFT_N $1"; }
ksft_fail() { KSFT_N=$((KSFT_N + 1)); KSFT_FAIL=$((KSFT_FAIL + 1)); echo "not ok $KSFT_N $1"; }
ksft_skip() { KSFT_N=$((KSFT_N + 1)); KSFT_SKIP=$((KSFT_SKIP + 1)); echo "ok $KSFT_N $1 # SKIP ${2:-}"; }
ksft_diag() { echo "# $*"; }
# ksft_skip_rest PREFIX WHY: skip every planned test not yet run ("PREFIX N"), finish
ksft_skip_rest() {
	while [ "$KSFT_N" -lt "${KSFT_PLAN:-0}" ]; do ksft_skip "$1 $((KSFT_N + 1))" "$2"; done
	ksft_finish
}
# ksft_check NAME CMD...: pass when CMD succeeds
ksft_check() {
	_n=$1; shift
	if "$@"; then ksft_pass "$_n"; else ksft_fail "$_n"; fi
}
# ksft_expect_eq NAME GOT WANT
ksft_expect_eq() {
	if [ "$2" = "$3" ]; then ksft_pass "$1"; else ksft_diag "$1: got '$2', want '$3'"; ksft_fail "$1"; fi
}
ksft_finish() {
	if [ -n "${KSFT_PLAN:-}" ] && [ "$KSFT_N" -ne "$KSFT_PLAN" ]; then
		echo "# planned $KSFT_PLAN tests, ran $KSFT_N"
		KSFT_FAIL=$((KSFT_FAIL + 1))
	fi
	echo "# Totals: pass:$KSFT_PASS fail:$KSFT_FAIL xfail:0 xpass:0 skip:$KSFT_SKIP error:0"
	[ $KSFT_FAIL -gt 0 ] && exit 1
	[ $KSFT_PASS -eq 0 ] && [ $KSFT_SKIP -gt 0 ] && exit 4
	exit 0
}
