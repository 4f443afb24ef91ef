#!/bin/bash
# profile.py with glibc's default allocator (A) against the allocator held in its
# steady state (S), interleaved A S A S. RES=224 BATCHES=2,4,8 for r224/;
# RES=32 BATCHES=4,16,64 for r32/ and, with ARCHS=densenet121,googlenet,
# regnet_x_400mf,mnasnet1_0,resnet34, r32b/ (OUT/A1/runs.csv .. OUT/S2/runs.csv).
cd "$(dirname "$0")/../../../.." && OUT=${OUT:-/tmp/palloc}
RES=${RES:-224}
BATCHES=${BATCHES:-2,4,8}
mkdir -p "$OUT"
A=${ARCHS:-squeezenet1_1,mobilenet_v2,resnet18,shufflenet_v2_x1_0,efficientnet_b0}
for p in 1 2; do
  /usr/bin/python3 predictor/tools/profile.py --res $RES --only $A --batches $BATCHES --out $OUT/A$p > $OUT/A$p.log 2>&1
  MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296 /usr/bin/python3 predictor/tools/profile.py --res $RES --only $A --batches $BATCHES --out $OUT/S$p > $OUT/S$p.log 2>&1
done
echo finished
