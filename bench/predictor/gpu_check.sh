#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The predictor's GPU checks, in one run on a machine with an NVIDIA GPU
# (Documentation/predictor.md, "Users' own hardware"):
#   1. the CUDA backend against the CPU one (test_predict_golden, whose
#      cuda_matches_cpu case skips without a GPU), also under
#      compute-sanitizer's memcheck where it exists;
#   2. tandemctl predict with --backend cuda and cpu on committed graphs: the
#      same prediction, and the time of each;
#   3. profile.py --device cuda on the 224x224 set (the user's workflow:
#      export with the GPU node's torch, time on its GPU).
# Built here with `make gpu-kit` (a tandemctl and a test binary without
# sanitizers, with the shared libraries they need), then run from the top of
# the tree:  bash bench/predictor/gpu_check.sh build/gpu-kit OUTDIR [MINUTES]
# Each step runs even when the one before it failed; the summary is OUTDIR/summary.txt.
set -u
kit=$(cd "${1:?kit directory}" && pwd)
out=${2:?output directory}
budget=${3:-4}
mkdir -p "$out"
# the kit's libraries for the kit's programs only (not for python3 and torch)
kitenv="LD_LIBRARY_PATH=$kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
log=$out/gpu_check.log
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }

{ date -u; uname -r; nvidia-smi; nvidia-smi -q | grep -iE 'product name|driver version|cuda version|clocks|max clocks' -A0; } >"$out/nvidia-smi.txt" 2>&1
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"

# 1. CUDA backend = CPU backend
timeout 120 env "$kitenv" "$kit/test_predict_golden" >"$out/golden.log" 2>&1
say "test_predict_golden: rc $? ($(grep -cE '^ok ' "$out/golden.log") ok," \
	"$(grep -cE '^not ok ' "$out/golden.log") not ok, $(grep -c '# SKIP' "$out/golden.log") skipped)"
grep -E 'cuda_matches_cpu' "$out/golden.log" | tee -a "$sum"
if command -v compute-sanitizer >/dev/null; then
	timeout 180 env "$kitenv" compute-sanitizer --tool memcheck --error-exitcode 9 "$kit/test_predict_golden" \
		>"$out/memcheck.log" 2>&1
	say "compute-sanitizer memcheck: rc $? ($(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1))"
fi

# 2. predict, both backends
for g in predictor/data/r224-2026-12-03/onnx/resnet18.onnx \
	 predictor/data/r224-2026-12-03/onnx/encvit16_l4_d256_post.onnx predictor/data/onnx/darts001.onnx; do
	[ -f "$g" ] || continue
	for b in cuda cpu; do
		t0=$(date +%s.%N)
		r=$(env "$kitenv" "$kit/tandemctl" -j predict "$g" --batch 8 --backend "$b" 2>&1)
		t1=$(date +%s.%N)
		echo "$g $b $r" >>"$log"
		say "predict $(basename "$g") --backend $b: $(echo "$r" | grep -oE '"(compute_s|backend)": *[^,}]*' | tr '\n' ' ')$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "(%.3f s)", b - a}')"
	done
done

# 3. the user's workflow: profile this GPU (export here, time here)
py=python3
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import torch' 2>/dev/null && py=/usr/bin/python3
say "profile: $($py -c 'import torch, torchvision, onnx; print("torch", torch.__version__, "torchvision", torchvision.__version__, "onnx", onnx.__version__)' 2>&1 | tail -1)"
prof=$(mktemp -d)
PYTHONUNBUFFERED=1 timeout $((budget * 60 + 120)) $py bench/predictor/profile.py --res 224 \
	--device cuda --mix --batches 8,32,64,128 --graphs predictor/data/r224-2026-12-03 --budget-min "$budget" --out "$prof" \
	>"$out/profile.log" 2>&1
say "profile.py: rc $?, $(grep -c 'batches in' "$out/profile.log") architectures," \
	"$(grep -c FAILED "$out/profile.log") failed, $(grep -c "graph from" "$out/profile.log") graphs not exported there"
cp "$prof/runs.csv" "$out/runs.csv" 2>/dev/null
tar -C "$prof" -czf "$out/onnx.tar.gz" onnx 2>/dev/null
# the exported graphs must import (torch's exporter there may be newer than here's)
n=0 bad=0
for g in "$prof"/onnx/*.onnx; do
	[ -f "$g" ] || continue
	n=$((n + 1))
	env "$kitenv" "$kit/tandemctl" -j predict "$g" --batch 32 --backend cuda >/dev/null 2>>"$log" || bad=$((bad + 1))
done
say "graphs exported there: $n, $bad not predicted"
rm -rf "$prof"
