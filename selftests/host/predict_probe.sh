#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tandemctl predict probe and the probe mapping of predict, from the
# command line (issue 33; Documentation/predictor.md, "Device probe"):
# the probe's text and JSON, its cache (a second call reads it, fast;
# another CPU model string through TANDEM_CPUINFO measures again), and a
# prediction on a host whose cached probe is 2x slower on every kind than
# the built-in model's training host: compute x2 exactly, the probes named;
# predict train --probe records the training host's probe in the model.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEM_TANDEMCTL:-$top/${B:-build}/tandemctl}
G=$top/predictor/data/r224-2026-12-03/onnx/resnet34.onnx
ksft_plan 10
if [ ! -x "$T" ] || ! command -v jq >/dev/null; then
	for i in $(seq 10); do ksft_skip "predict probe $i" "needs $T and jq"; done
	ksft_finish
fi
tmp=$(mktemp -d /tmp/tandem-probe-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export TANDEM_PROBE_DIR=$tmp
unset TANDEM_CPUINFO TANDEM_PROBE
cache=$tmp/probe-v1.txt
jqe() { jq -e "$@" >/dev/null; }	# jq's exit status only

# 1: measured now, every kind's rate > 0, the cache file written
"$T" -j predict probe >"$tmp/p1.json" 2>"$tmp/err"
ksft_check "probe -j: measured now, 5 rates > 0, cached at \$TANDEM_PROBE_DIR" \
	jqe --arg c "$cache" '.cached == false and .cache == $c and
		(.probe.rates | [.conv, .dwconv, .gemm, .mem, .op] | all(. > 0)) and
		.probe.seconds > 0 and .probe.seconds < 30 and .probe.ncpu >= 1' "$tmp/p1.json"

# 2: the second call reads the cache: same record, in well under a second
s=$(date +%s%N)
"$T" -j predict probe >"$tmp/p2.json"
ms=$((($(date +%s%N) - s) / 1000000))
ksft_diag "second call: $ms ms"
ksft_check "probe -j again: cached, the same rates, $ms ms" \
	bash -c "[ $ms -lt 1000 ] && jq -e --slurpfile a '$tmp/p1.json' \
		'.cached == true and .probe.when == \$a[0].probe.when and
		 ([.probe.rates[]] | to_entries | all(.value / [\$a[0].probe.rates[]][.key] - 1 | fabs < 1e-5))' \
		'$tmp/p2.json' >/dev/null"

# 3: text: one line of identity, one per kind
"$T" predict probe >"$tmp/p.txt"
ksft_check "probe text: identity line, then conv/dwconv/gemm/mem/op with units" \
	bash -c "head -1 '$tmp/p.txt' | grep -q '^device probe (cached, $cache): .* CPUs, probed 20' &&
		[ \$(grep -cE '^  (conv|dwconv|gemm) +[0-9.e+]+ GFLOP/s|^  mem +[0-9.e+]+ GB/s|^  op +[0-9.e+]+ Mop/s' '$tmp/p.txt') = 5 ]"

# 4: another CPU model string is another host
printf 'processor\t: 0\nmodel name\t: Test CPU 2x slower\n' >"$tmp/cpuinfo"
export TANDEM_CPUINFO=$tmp/cpuinfo
"$T" -j predict probe >"$tmp/p3.json"
ksft_check "TANDEM_CPUINFO names another CPU: measured again, cache keyed by it" \
	bash -c "jq -e '.cached == false and .probe.cpu == \"Test CPU 2x slower\"' '$tmp/p3.json' >/dev/null &&
		grep -qx 'cpu Test CPU 2x slower' '$cache'"

# 5-7: this host's cached probe made 2x slower than the training host's on
# every kind: the prediction doubles, the probes are named, no device warning
"$T" -j predict "$G" --batch 4 --no-probe >"$tmp/plain.json"
"$T" -j predict "$G" --batch 4 >"$tmp/same.json"
jq -r '.probe.trained.rates as $r | "tandem-probe 1\ncpu Test CPU 2x slower\nncpu \(.probe.host.ncpu)\nwhen 1\nseconds 1\n" +
	([["conv","dwconv","gemm","mem","op"][] | "\(.) \($r[.] / 2) 0"] | join("\n"))' \
	"$tmp/same.json" >"$cache"
"$T" -j predict "$G" --batch 4 >"$tmp/slow.json"
ksft_check "--no-probe: not mapped, says why" \
	jqe '.probe.mapped == false and .probe.reason == "--no-probe"' "$tmp/plain.json"
ksft_check "2x slower probe on every kind: ratio 2, compute_s 2x the unmapped one" \
	jqe --slurpfile a "$tmp/plain.json" '.probe.mapped and (.probe.ratio - 2 | fabs) < 1e-9 and
		(.compute_s / $a[0].compute_s - 2 | fabs) < 1e-9 and
		(.probe.ratios | [.conv, .dwconv, .gemm, .mem, .op] | all((. - 2 | fabs) < 1e-9))' \
		"$tmp/slow.json"
ksft_check "the probes named: training host AMD EPYC (built-in reference), this host cached" \
	jqe '.probe.trained.cpu == "AMD EPYC" and .probe.host.cpu == "Test CPU 2x slower" and
		.probe.host_cached == true and .probe.host.date == "1970-01-01T00:00:01Z" and
		.warnings == []' "$tmp/slow.json"
"$T" predict "$G" --batch 4 >"$tmp/slow.txt"
ksft_check "text: 'probe: compute mapped to this host x2.000', from/to lines" \
	bash -c "grep -q '^probe: compute mapped to this host x2.000 (conv 2.000, dwconv 2.000, gemm 2.000, mem 2.000, op 2.000)' '$tmp/slow.txt' &&
		grep -q \"^  from the training host's probe: AMD EPYC (2 CPUs\" '$tmp/slow.txt' &&
		grep -q \"^  to this host's (cached): Test CPU 2x slower\" '$tmp/slow.txt'"

# 9-10: predict train --probe FILE: the model maps from that probe (a host 3x
# faster than this one's cached probe on every kind); without it, no mapping
D=$top/predictor/data/r224-2026-12-03/runs.csv
awk '$1 == "cpu" { print "cpu Trainer CPU"; next } $1 ~ /^(conv|dwconv|gemm|mem|op)$/ { $2 = sprintf("%.17g", 3 * $2) } { print }' "$cache" >"$tmp/train-probe.txt"
"$T" predict train --data "$D" --base-only --probe "$tmp/train-probe.txt" --out "$tmp/p.tpm" >/dev/null &&
	"$T" -j predict "$G" --batch 4 --model "$tmp/p.tpm" >"$tmp/trained.json" &&
	"$T" -j predict "$G" --batch 4 --model "$tmp/p.tpm" --no-probe >"$tmp/trained0.json"
ksft_check "train --probe: the model's training host is the probe's, 3x faster: compute x3" \
	jqe --slurpfile a "$tmp/trained0.json" '.probe.mapped and .probe.trained.cpu == "Trainer CPU" and
		(.probe.ratio - 3 | fabs) < 1e-9 and (.compute_s / $a[0].compute_s - 3 | fabs) < 1e-9' \
		"$tmp/trained.json"
"$T" predict train --data "$D" --base-only --out "$tmp/n.tpm" >/dev/null &&
	"$T" -j predict "$G" --batch 4 --model "$tmp/n.tpm" >"$tmp/none.json"
ksft_check "train without --probe: not mapped, says the model records no probe" \
	jqe '.probe.mapped == false and .probe.reason == "the model records no probe of its training host"' \
		"$tmp/none.json"
ksft_finish
