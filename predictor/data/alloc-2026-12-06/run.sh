#!/bin/bash
# profile.py default allocator (A) against glibc held steady (S), interleaved, 2 passes each
cd "$(dirname "$0")/../../.." && OUT=${OUT:-/tmp/palloc}
mkdir -p "$OUT"
A="squeezenet1_1,mobilenet_v2,resnet18,shufflenet_v2_x1_0,efficientnet_b0"
for p in 1 2; do
  /usr/bin/python3 predictor/tools/profile.py --res 224 --only $A --batches 2,4,8 --out $OUT/A$p > $OUT/A$p.log 2>&1
  MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296 /usr/bin/python3 predictor/tools/profile.py --res 224 --only $A --batches 2,4,8 --out $OUT/S$p > $OUT/S$p.log 2>&1
done
echo finished
