#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One large random-access file (examples/pytorch/make_records.py, train.py
# --records), as HDF5 or LMDB datasets are: the packer writes fixed-size
# records that hold every image's bytes unchanged and refuses to overwrite;
# the training script reads random records with pread through DataLoader
# workers. Under `tandemctl run` with the host's BPF tracker (root, BTF), on
# a cold file: the job's misses are the file's pages (stat; fincore after
# the run says they are all cached), its second epoch re-reads them (own
# hits); `tandemctl calibrate` measures the job on it and `run --stagger
# auto` runs two of them from that profile, loading each page once between
# them. Needs python3-torch, -torchvision and -pil for /usr/bin/python3.
# About 30 s.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
PY=/usr/bin/python3
EX=$top/examples/pytorch
N=6
ksft_plan $N
skip_all() { ksft_skip_rest "records" "$1"; }
$PY -c 'import torch, torchvision, PIL' 2>/dev/null ||
	skip_all "needs python3-torch, python3-torchvision, python3-pil for $PY"
tmp=$(mktemp -d /var/tmp/tandem-records-XXXXXX)	# not tmpfs: pages come from storage
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-records-$$
trap '"$T" tracker unload >/dev/null 2>&1; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

# 1: 4 classes x 24 images in records of 8 KiB (two pages each)
$PY "$EX/gen_dataset.py" "$tmp/ds" --classes 4 --per-class 24 --size 64 --noise 0.2 >/dev/null
mkdir "$tmp/rec"
f=$tmp/rec/train.rec
$PY "$EX/make_records.py" "$tmp/ds" "$f" --record-size 8K >"$tmp/mk.out" 2>&1
rc=$?
ksft_diag "$(cat "$tmp/mk.out")"
# ground truth apart from the packer: the records' JPEGs and classes, as a
# multiset of md5s, equal the images'
check=$($PY - "$tmp/ds" "$f" <<'EOP'
import glob, hashlib, json, os, struct, sys
src, path = sys.argv[1:]
classes = sorted(os.listdir(src))
want = sorted(hashlib.md5(open(p, "rb").read()).hexdigest() + " " + str(classes.index(p.split("/")[-2]))
              for p in glob.glob(src + "/*/*.jpg"))
data = open(path, "rb").read()
meta = json.loads(data[:4096].split(b"\n")[1])
got = []
for i in range(meta["count"]):
    rec = data[4096 + i * 8192:4096 + (i + 1) * 8192]
    cls, n = struct.unpack_from("<II", rec)
    got.append(hashlib.md5(rec[8:8 + n]).hexdigest() + " " + str(cls))
print(len(data) == 4096 + 8192 * len(want), sorted(got) == want, meta["classes"] == classes)
EOP
)
$PY "$EX/make_records.py" "$tmp/ds" "$f" --record-size 8K >/dev/null 2>"$tmp/again.err"
again=$?
ksft_check "make_records: exit 0; size, records = images, classes: $check; again: exit $again" \
	eval '[ $rc -eq 0 ] && [ "$check" = "True True True" ] && [ $again -eq 2 ] &&
	      grep -q "already exists" "$tmp/again.err"'

if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ] || ! command -v jq >/dev/null ||
   ! command -v fincore >/dev/null; then
	for i in 2 3 4 5 6; do ksft_skip "records $i" "needs root, BTF, jq and fincore"; done
	ksft_finish
fi
P=$(( ($(stat -c %s "$f") + 4095) / 4096 ))
cold() { sync "$f"; dd if="$f" iflag=nocache count=0 status=none; }
job="$PY $EX/train.py $f --records --arch shufflenet_v2_x0_5 --size 32 --batch-size 16 --workers 2 --epochs 2"
q() { jq -r "$2" "$1" 2>/dev/null; }
within() { awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= w * 0.02 + 2) }'; }

# 2-3: tracked, cold: the job loads every page of the file once (random
# preads of whole records), then re-reads them in its second epoch
cold
# shellcheck disable=SC2086
"$T" run --dataset "$tmp/rec" --report "$tmp/r.json" -- $job >"$tmp/run.out" 2>&1
rc=$?
sed 's/^/# /' "$tmp/run.out"
res=$(fincore -nb -o RES "$f" | tr -d ' ')
ksft_diag "file: $P pages, $res bytes cached after; job: $(q "$tmp/r.json" '.instances[0] | "misses \(.misses), own \(.own_hits), shared \(.shared_hits)"')"
ksft_check "run --dataset FILE: exit 0, 2 epochs of 96, tracked, misses = the file's pages (stat: $P; fincore: all cached)" \
	eval '[ $rc -eq 0 ] && [ "$(grep -c "^epoch [12]/2: .* s, 96 images" "$tmp/run.out")" -eq 2 ] &&
	      [ "$(q "$tmp/r.json" .tracker.dataset_id)" -gt 0 ] 2>/dev/null && [ "$res" -eq $((P * 4096)) ] &&
	      within "$(q "$tmp/r.json" .instances[0].misses)" $P'
# the second epoch reads every record's two pages again (the header page
# only once, at the start): own hits = the records' pages, P - 1
ksft_check "run --dataset FILE: own hits = the records' pages ($((P - 1)): the second epoch)" \
	within "$(q "$tmp/r.json" .instances[0].own_hits)" $((P - 1))

# 4: calibrate measures the job on the file (warm runs with the tracker);
# --record-size splits the one file into samples for the bandwidth probe
# (without it: "the sample has fewer samples than readers", which says so)
# shellcheck disable=SC2086
"$T" -j calibrate --dataset "$tmp/rec" --record-size 8K --sample 256K --bw-time 0.3 --warm-time 2s --warm-runs 1 \
	--instance name=A,epochs=2 -o "$tmp/prof.json" -- $job >"$tmp/cal.out" 2>"$tmp/cal.err"
rc=$?
ksft_diag "calibrate: $(q "$tmp/prof.json" '[.dataset.bytes, (.instances[] | [.name, .rate_bps])] | tostring')"
ksft_check "calibrate --dataset FILE: exit 0, the dataset's bytes = the file's (stat), the job's rate > 0" \
	eval '[ $rc -eq 0 ] && [ "$(q "$tmp/prof.json" .dataset.bytes)" = "$(stat -c %s "$f")" ] &&
	      [ "$(q "$tmp/prof.json" ".instances[0].rate_bps > 0")" = true ]'

# 5-6: run --stagger auto of two such jobs from the profile, cold: both end
# well, the model predicted the schedule, and between them they load each
# page once (the later one's reads of what the first loaded are shared hits)
cold
# shellcheck disable=SC2086
"$T" run --dataset "$tmp/rec" --stagger auto --profile "$tmp/prof.json" --report "$tmp/r2.json" \
	-- $job ::: $job >"$tmp/run2.out" 2>&1
rc=$?
ksft_diag "stagger auto: $(q "$tmp/r2.json" '[.stagger, .predicted_makespan_s, [.instances[] | {start_s, misses, own_hits, shared_hits}]] | tostring')"
ksft_check "run --stagger auto on FILE: exit 0, both jobs 2 epochs, a predicted makespan" \
	eval '[ $rc -eq 0 ] && [ "$(grep -c "^epoch [12]/2: .* s, 96 images" "$tmp/run2.out")" -eq 4 ] &&
	      [ "$(q "$tmp/r2.json" ".stagger == \"auto\" and .predicted_makespan_s > 0")" = true ]'
ksft_check "run --stagger auto on FILE: the two jobs' misses add up to the file's pages ($P)" \
	within "$(q "$tmp/r2.json" '[.instances[].misses] | add')" $P
ksft_finish
