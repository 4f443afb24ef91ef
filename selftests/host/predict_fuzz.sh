#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# libFuzzer run of the predictor's ONNX reader and graph import
# (predictor/fuzz/fuzz_onnx.c, ASan + UBSan) for a bounded time, seeded
# with committed graphs. Any crash, leak, sanitizer report or failure
# without an error message fails the test.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
fz=$top/${B:-build}/predictor/fuzz_onnx
secs=${PREDICT_FUZZ_SECONDS:-20}
ksft_plan 1
if [ ! -x "$fz" ]; then
	ksft_skip "fuzz ONNX reader" "$fz not built (needs clang with libFuzzer)"
	ksft_finish
fi
tmp=$(mktemp -d /tmp/tandem-fuzz-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/corpus"
for a in squeezenet1_1 resnet18 mobilenet_v3_small darts002 vit_l4_d128_p16; do
	f=$top/predictor/data/onnx/$a.onnx
	[ -f "$f" ] && cp "$f" "$tmp/corpus/"
done
# -timeout: one input may not take more than 10 s; crashes go to $tmp
if (cd "$tmp" && nice timeout -k 5 $((secs + 60)) "$fz" -max_total_time="$secs" \
	-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus >fuzz.log 2>&1); then
	ksft_diag "$(grep -E '^Done|stat::number_of_executed_units' "$tmp/fuzz.log" | head -2 | tr '\n' ' ')"
	ksft_pass "fuzz ONNX reader for ${secs} s"
else
	tail -n 30 "$tmp/fuzz.log" | sed 's/^/# /'
	ksft_fail "fuzz ONNX reader for ${secs} s"
fi
ksft_finish
