#!/bin/bash
# profile.py with glibc's default allocator (A) against the allocator held in its
# steady state (S), interleaved A S A S. RES=224 BATCHES=2,4,8 as committed
# (A1..S2.csv); RES=32 BATCHES=4,16,64 for the 32x32 check (A1-32..S2-32.csv).
cd "$(dirname "$0")/../../.." && OUT=${OUT:-/tmp/palloc}
RES=${RES:-224}
BATCHES=${BATCHES:-2,4,8}
mkdir -p "$OUT"
A=${ARCHS:-squeezenet1_1,mobilenet_v2,resnet18,shufflenet_v2_x1_0,efficientnet_b0}
for p in 1 2; do
  /usr/bin/python3 predictor/tools/profile.py --res $RES --only $A --batches $BATCHES --out $OUT/A$p > $OUT/A$p.log 2>&1
  MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296 /usr/bin/python3 predictor/tools/profile.py --res $RES --only $A --batches $BATCHES --out $OUT/S$p > $OUT/S$p.log 2>&1
done
echo finished
