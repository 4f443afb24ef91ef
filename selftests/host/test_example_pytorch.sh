#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# examples/pytorch on the host: the generator writes a real JPEG ImageFolder
# tree (checked with file(1) and by counting), the same for the same
# arguments, with --flat hard links to the same inodes; the training script
# trains on it with DataLoader workers, one line per epoch over every image,
# and the same seed gives the same losses. Needs Debian's python3-torch,
# python3-torchvision and python3-pil (/usr/bin/python3). About 15 s.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
PY=/usr/bin/python3
EX=$top/examples/pytorch
N=5
ksft_plan $N
skip_all() {
	for i in $(seq $N); do ksft_skip "example $i" "$1"; done
	ksft_finish
}
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
	$PY "$EX/train.py" "$tmp/ds" --arch shufflenet_v2_x0_5 --size 32 --batch-size 16 \
		--workers 2 --epochs 2 --seed 7 >"$1" 2>&1
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
ksft_finish
