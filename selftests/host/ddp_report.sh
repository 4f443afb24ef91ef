#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench/predictor/ddp.py, the data-parallel measurement behind the predictor's
# all-reduce term (Documentation/results/predictor.md, "The distributed term against
# data-parallel runs"): --report on the committed runs reproduces the committed
# reports and the figures the documentation states, for both CSV layouts (the
# repeatable protocol and the earlier one-shot runs); --all refuses bad input
# before it measures anything.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
PY=/usr/bin/python3
DDP=$top/bench/predictor/ddp.py
D=$top/predictor/data
DOC=$top/Documentation/results/predictor.md
ksft_plan 8
if ! "$PY" -c 'import torch, torchvision' 2>/dev/null; then
	for i in $(seq 8); do ksft_skip "ddp report $i" "needs python3-torch, python3-torchvision"; done
	ksft_finish
fi
tmp=$(mktemp -d /tmp/tandem-ddp-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# 1-3: each committed run of the repeatable protocol reports as committed
for d in ddp-2026-12-06 ddp-2026-12-06b ddp-2026-12-06-nobcast; do
	"$PY" "$DDP" --report --out "$D/$d" >"$tmp/$d.txt" 2>&1
	ksft_check "--report on $d equals its report.txt" cmp -s "$tmp/$d.txt" "$D/$d/report.txt"
done

# 4: the mean errors predictor.md states are the tool's (runs A, B, without
# the buffers' broadcast)
mean() { sed -n 's/^predicted from the 1-worker time: mean |error| \([0-9.]* %\).*/\1/p' "$tmp/$1.txt"; }
a=$(mean ddp-2026-12-06) b=$(mean ddp-2026-12-06b) n=$(mean ddp-2026-12-06-nobcast)
ksft_diag "run A $a, run B $b, no broadcast $n"
ksft_check "predictor.md states run A's, run B's and the no-broadcast mean error" \
	bash -c "[ -n '$a' ] && [ -n '$b' ] && [ -n '$n' ] &&
		grep -qF '$a mean absolute' '$DOC' && grep -qF '$b (median' '$DOC' &&
		grep -qF '**$n** mean' '$DOC'"

# 5: the earlier one-shot layout (arch,onnx,... with t1/t2 columns) still reads
"$PY" "$DDP" --report --out "$D/ddp" >"$tmp/oneshot.txt" 2>&1
ksft_check "--report on the one-shot runs: 9.5 % mean over 14 (median 5.8 %)" \
	grep -qF "mean |error| 9.5 % over 14 architectures (median 5.8 %, max 32.7 %)" "$tmp/oneshot.txt"

# 6: an unknown architecture is refused before anything is measured or written
timeout 60 "$PY" "$DDP" --all --arch resnet18,nosuchnet --out "$tmp/new" >"$tmp/o6" 2>&1
rc=$?
ksft_check "--all refuses an unknown architecture (exit $rc)" \
	bash -c "[ $rc -ne 0 ] && grep -q 'unknown architecture(s): nosuchnet' '$tmp/o6' && [ ! -e '$tmp/new' ]"

# 7: --all never appends to an earlier run's rows
mkdir -p "$tmp/old" && echo "earlier rows" >"$tmp/old/runs.csv"
timeout 60 "$PY" "$DDP" --all --arch squeezenet1_1 --out "$tmp/old" >"$tmp/o7" 2>&1
rc=$?
ksft_check "--all refuses a directory that has runs.csv (exit $rc)" \
	bash -c "[ $rc -ne 0 ] && grep -q 'runs.csv exists' '$tmp/o7' &&
		[ \"\$(cat '$tmp/old/runs.csv')\" = 'earlier rows' ]"

# 8: no mode is a usage error
"$PY" "$DDP" --out "$tmp/x" >"$tmp/o8" 2>&1
rc=$?
ksft_check "no mode: usage error (exit $rc)" \
	bash -c "[ $rc -eq 2 ] && grep -q 'one of --all, --allreduce, --report' '$tmp/o8'"
ksft_finish
