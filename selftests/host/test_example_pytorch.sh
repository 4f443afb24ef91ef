#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# examples/pytorch on the host: the generator writes a real JPEG ImageFolder
# tree (checked with file(1) and by counting), the same for the same
# arguments, with --flat hard links to the same inodes; the training script
# trains on it with DataLoader workers, one line per epoch over every image,
# and the same seed gives the same losses; --checkpoint-dir writes a
# checkpoint every K steps (a temporary name renamed, one parseable stall
# line each, the same losses as without) that torch.load reads back into a
# fresh model and optimizer. Needs Debian's python3-torch,
# python3-torchvision and python3-pil (/usr/bin/python3). About 45 s on a busy host.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
PY=/usr/bin/python3
EX=$top/examples/pytorch
N=8
ksft_plan $N
skip_all() { ksft_skip_rest "example" "$1"; }
$PY -c 'import torch, torchvision, PIL' 2>/dev/null ||
	skip_all "needs python3-torch, python3-torchvision, python3-pil for $PY"
command -v file >/dev/null || skip_all "needs file(1)"
tmp=$(mktemp -d /var/tmp/tandem-expt-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# 1: 3 classes x 16 images of 64x64, every one a JPEG of that size
$PY "$EX/gen_dataset.py" "$tmp/ds" --classes 3 --per-class 16 --size 64 --noise 0.1 \
	--flat "$tmp/flat" >"$tmp/gen.out"
rc=$?
ksft_diag "$(cat "$tmp/gen.out")"
njpeg=$(find "$tmp/ds" -name '*.jpg' -exec file -b {} + | grep -c 'JPEG image data.* 64x64,')
ksft_check "gen: 3 class folders, 48 files, all JPEG 64x64 (file: $njpeg)" \
	test $rc -eq 0 -a "$(find "$tmp/ds" -mindepth 1 -maxdepth 1 -type d | wc -l)" -eq 3 -a "$njpeg" -eq 48

# 2: the same arguments write the same bytes
$PY "$EX/gen_dataset.py" "$tmp/ds2" --classes 3 --per-class 16 --size 64 --noise 0.1 >/dev/null
sums() { (cd "$1" && find . -type f | sort | xargs md5sum); }
ksft_check "gen: deterministic (same md5sum for every file)" cmp -s <(sums "$tmp/ds") <(sums "$tmp/ds2")

# 3: --flat: one folder of hard links to the same inodes
same=0
while read -r c i; do
	[ "$tmp/flat/c${c}_$i.jpg" -ef "$tmp/ds/class_$c/img_$i.jpg" ] && same=$((same + 1))
done < <(cd "$tmp/ds" && find . -name '*.jpg' | sed 's|./class_\([0-9]*\)/img_\([0-9]*\).jpg|\1 \2|')
ksft_check "gen --flat: 48 links, each the same inode as its image ($same)" \
	test "$(find "$tmp/flat" -type f | wc -l)" -eq 48 -a "$same" -eq 48

# 4-5: train 2 epochs with 2 workers; again with the same seed
train() {
	out=$1
	shift
	$PY "$EX/train.py" "$tmp/ds" --arch shufflenet_v2_x0_5 --size 32 --batch-size 16 \
		--workers 2 --epochs 2 --seed 7 "$@" >"$out" 2>&1
}
train "$tmp/t1.out"
rc=$?
ksft_diag "$(cat "$tmp/t1.out")"
ksft_check "train: exit 0, 48 images in 3 classes, 2 epoch lines of 48 images, a total" \
	test $rc -eq 0 -a "$(grep -c '^epoch [12]/2: .* s, 48 images' "$tmp/t1.out")" -eq 2 \
	-a "$(grep -c 'on 48 images, 3 classes' "$tmp/t1.out")" -eq 1 -a "$(grep -c '^total ' "$tmp/t1.out")" -eq 1
train "$tmp/t2.out"
losses() { grep -o 'loss [0-9.]*, accuracy [0-9.]*' "$1"; }
ksft_check "train: the same seed gives the same losses ($(losses "$tmp/t2.out" | tr '\n' ' '))" \
	eval '[ -n "$(losses "$tmp/t1.out")" ] && [ "$(losses "$tmp/t1.out")" = "$(losses "$tmp/t2.out")" ]'

# 6-8: checkpoints every 2 of the 6 steps (3 batches of 16 per epoch)
mkdir "$tmp/ck"
train "$tmp/t3.out" --checkpoint-dir "$tmp/ck" --checkpoint-every 2
rc=$?
ksft_diag "$(grep checkpoint "$tmp/t3.out")"
files=$(cd "$tmp/ck" && ls -A | tr '\n' ' ')
ksft_check "checkpoint: exit 0, the folder holds ckpt-000002/4/6.pt and no temporary ($files)" \
	test $rc -eq 0 -a "$files" = "ckpt-000002.pt ckpt-000004.pt ckpt-000006.pt "
# each stall line: its step, path, the file's size in bytes, a stall > 0
good=0
while read -r step path bytes stall; do
	[ "$path" = "$tmp/ck/ckpt-$(printf %06d "$step").pt" ] &&
		[ "$bytes" -eq "$(stat -c %s "$path")" ] && [ "$bytes" -gt 100000 ] &&
		awk -v s="$stall" 'BEGIN { exit !(s > 0) }' && good=$((good + 1))
done < <(sed -n 's/^checkpoint step \([0-9]*\): \(.*\), \([0-9]*\) bytes, stall \([0-9.]*\) s$/\1 \2 \3 \4/p' "$tmp/t3.out")
ksft_check "checkpoint: 3 stall lines (step, path, its size, stall > 0: $good good), a median line, the same losses" \
	test "$good" -eq 3 -a "$(grep -c '^checkpoints 3: stall median [0-9.]* s, max ' "$tmp/t3.out")" -eq 1 \
	-a "$(losses "$tmp/t1.out")" = "$(losses "$tmp/t3.out")"
load=$($PY - "$tmp/ck/ckpt-000006.pt" <<'EOP' 2>&1
import sys, torch, torchvision
ck = torch.load(sys.argv[1])  # our own file: a full unpickle
m = torchvision.models.shufflenet_v2_x0_5(num_classes=3)
m.load_state_dict(ck["model"])
opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
opt.load_state_dict(ck["optimizer"])
bufs = sum(1 for s in opt.state.values() if "momentum_buffer" in s)
print(ck["step"], ck["epoch"], bufs == len(list(m.parameters())))
EOP
)
ksft_check "checkpoint: torch.load reads step 6, epoch 1, loads into a fresh model and optimizer ($load)" \
	test "$load" = "6 1 True"
ksft_finish
