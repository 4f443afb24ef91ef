#!/usr/bin/env bash
# House rule 5: kernel code passes checkpatch.pl --no-tree and sparse (make C=2)
# with no warnings.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
cd "$top" || exit 1
ksft_plan 2
if out=$(make -s --no-print-directory checkpatch 2>&1); then
	ksft_pass "checkpatch: no errors or warnings"
else
	echo "$out" | grep -v '^make' | sed 's/^/# /'
	ksft_fail "checkpatch: no errors or warnings"
fi
if ! command -v sparse >/dev/null; then
	ksft_skip "sparse" "sparse not installed"
else
	out=$(make -s --no-print-directory sparse 2>&1)
	warn=$(echo "$out" | grep -E '(warning|error):' | grep 'kmod/')
	if [ -z "$warn" ]; then ksft_pass "sparse: no warnings"; else
		echo "$warn" | sed 's/^/# /'; ksft_fail "sparse: no warnings"; fi
fi
ksft_finish
