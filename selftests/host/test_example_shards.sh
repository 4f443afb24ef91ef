#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A sharded dataset (examples/pytorch/make_shards.py, train.py --shards): the
# packer writes WebDataset-style tar shards (KEY.jpg, KEY.cls) that hold
# every image's bytes unchanged, none over --shard-size, the same bytes for
# the same arguments, and refuses a folder that already holds shards; the
# training script reads them with tarfile and DataLoader workers, every image
# once per epoch, the same losses for the same seed; under `tandemctl run`
# with the host's BPF tracker (root, BTF) a cold run's misses are the shards'
# pages (stat) and its second epoch re-reads them (own hits). Needs
# python3-torch, -torchvision and -pil for /usr/bin/python3. About 20 s.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
PY=/usr/bin/python3
EX=$top/examples/pytorch
N=6
ksft_plan $N
skip_all() { ksft_skip_rest "shards" "$1"; }
$PY -c 'import torch, torchvision, PIL' 2>/dev/null ||
	skip_all "needs python3-torch, python3-torchvision, python3-pil for $PY"
tmp=$(mktemp -d /var/tmp/tandem-shards-XXXXXX)	# not tmpfs: pages come from storage
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-shards-$$
trap '"$T" tracker unload >/dev/null 2>&1; rm -rf "$tmp"' EXIT

# 1: 4 classes x 24 images into shards of at most 60 KiB
$PY "$EX/gen_dataset.py" "$tmp/ds" --classes 4 --per-class 24 --size 64 --noise 0.2 >/dev/null
$PY "$EX/make_shards.py" "$tmp/ds" "$tmp/sh" --shard-size 60K >"$tmp/mk.out" 2>&1
rc=$?
ksft_diag "$(cat "$tmp/mk.out")"
# ground truth with tarfile, apart from the packer: each shard's members in
# pairs KEY.jpg, KEY.cls; the multiset of the JPEGs' md5s equals the images'
check=$($PY - "$tmp/ds" "$tmp/sh" <<'EOP'
import glob, hashlib, os, sys, tarfile
src, sh = sys.argv[1:]
classes = sorted(os.listdir(src))
want = sorted(hashlib.md5(open(p, "rb").read()).hexdigest() + " " + str(classes.index(p.split("/")[-2]))
              for p in glob.glob(src + "/*/*.jpg"))
got, bad, n = [], 0, 0
for path in sorted(glob.glob(sh + "/*.tar")):
    n += 1
    bad += os.path.getsize(path) > 60 * 1024
    with tarfile.open(path) as t:
        ms = t.getmembers()
        for j, c in zip(ms[::2], ms[1::2]):
            if j.name[:-4] != c.name[:-4] or not j.name.endswith(".jpg") or not c.name.endswith(".cls"):
                bad += 1
                continue
            got.append(hashlib.md5(t.extractfile(j).read()).hexdigest() + " " +
                       t.extractfile(c).read().decode())
        bad += len(ms) % 2
ok = got == [] or sorted(got) == want
print(n, len(got), bad, "same" if sorted(got) == want else "differ",
      open(sh + "/classes.txt").read().split() == classes)
EOP
)
ksft_check "make_shards: exit 0; shards, samples, bad, images, classes.txt: $check" \
	eval '[ $rc -eq 0 ] && [[ "$check" =~ ^([2-9]|[1-9][0-9]+)\ 96\ 0\ same\ True$ ]]'

# 2: the same arguments write the same bytes; a folder with shards is refused
$PY "$EX/make_shards.py" "$tmp/ds" "$tmp/sh2" --shard-size 60K >/dev/null 2>&1
$PY "$EX/make_shards.py" "$tmp/ds" "$tmp/sh" --shard-size 60K >/dev/null 2>"$tmp/again.err"
rc=$?
sums() { (cd "$1" && md5sum -- *); }
ksft_check "make_shards: deterministic; again into the same folder: exit $rc, '$(tail -n 1 "$tmp/again.err")'" \
	eval 'cmp -s <(sums "$tmp/sh") <(sums "$tmp/sh2") && [ $rc -eq 2 ] && grep -q "already holds shards" "$tmp/again.err"'

# 3-4: train 2 epochs from the shards with 2 workers; again with the same seed
train() {
	$PY "$EX/train.py" "$tmp/sh" --shards --arch shufflenet_v2_x0_5 --size 32 --batch-size 16 \
		--workers 2 --epochs 2 --seed 5 --shuffle-buffer 32
}
train >"$tmp/t1.out" 2>&1
rc=$?
sed 's/^/# /' "$tmp/t1.out"
ksft_check "train --shards: exit 0, 4 classes, 2 epoch lines of the 96 images" \
	test $rc -eq 0 -a "$(grep -c '^epoch [12]/2: .* s, 96 images' "$tmp/t1.out")" -eq 2 \
	-a "$(grep -c 'shards, 4 classes' "$tmp/t1.out")" -eq 1
train >"$tmp/t2.out" 2>&1
losses() { grep -o 'loss [0-9.]*, accuracy [0-9.]*' "$1"; }
ksft_check "train --shards: the same seed gives the same losses ($(losses "$tmp/t2.out" | tr '\n' ' '))" \
	eval '[ -n "$(losses "$tmp/t1.out")" ] && [ "$(losses "$tmp/t1.out")" = "$(losses "$tmp/t2.out")" ]'

# 5-6: tracked, cold: the job loads every page of the shards once, then
# re-reads them in its second epoch
if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ] || ! command -v jq >/dev/null; then
	ksft_skip "run --dataset SHARDS: misses = the shards' pages" "needs root, BTF and jq"
	ksft_skip "run --dataset SHARDS: own hits = the shards' pages" "needs root, BTF and jq"
	ksft_finish
fi
P=$(stat -c %s "$tmp"/sh/*.tar | awk '{ p += int(($1 + 4095) / 4096) } END { print p }')
sync "$tmp"/sh/*	# written just now: dirty pages are not dropped
for f in "$tmp"/sh/*; do dd if="$f" iflag=nocache count=0 status=none; done
"$T" run --dataset "$tmp/sh" --report "$tmp/r.json" -- "$PY" "$EX/train.py" "$tmp/sh" --shards \
	--arch shufflenet_v2_x0_5 --size 32 --batch-size 16 --workers 2 --epochs 2 >"$tmp/run.out" 2>&1
rc=$?
q() { jq -r "$1" "$tmp/r.json" 2>/dev/null; }
ksft_diag "shards: $P pages; job: $(q '.instances[0] | "misses \(.misses), own \(.own_hits), shared \(.shared_hits)"')"
within() { awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= w * 0.02 + 2) }'; }
ksft_check "run --dataset SHARDS: exit 0, tracked, misses = the shards' pages (stat: $P)" \
	eval '[ $rc -eq 0 ] && [ "$(q .tracker.dataset_id)" -gt 0 ] 2>/dev/null && within "$(q .instances[0].misses)" $P'
# tarfile reads 10 KiB at a time, so a page that straddles two reads is a
# hit of the job's own in its first epoch too: at least the pages, at most
# 1.5 times (two straddles per 40 KiB)
ksft_check "run --dataset SHARDS: own hits from the pages to 1.5 times (the second epoch, straddles)" \
	awk -v g="$(q .instances[0].own_hits)" -v p=$P 'BEGIN { exit !(g != "" && g >= p * 0.98 && g <= p * 1.5) }' 
ksft_finish
