#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo, part 3: the predictor on a model it was not trained on.
# ResNet-34 at 224x224 is held out of the built-in 224x224 model's training
# (Documentation/predictor.md; its runs are in r224-2026-12-03/heldout.csv,
# not in that model's runs.csv; the 32x32 model, which a 224x224 graph does
# not get, was trained on it at 32x32). bench/predictor/profile.py exports it here with a plain
# torch.onnx.export (training mode, no weights, nothing else) and times its
# training iterations on this host (forward + loss + backward + SGD step, one
# thread, process CPU time, median of 5 after 2 warm-up); `tandemctl
# predict` predicts the same iterations from the ONNX graph alone. Printed
# side by side with the error.
#
#   scripts/demo-predict.sh [--out DIR] [--batches LIST]  (default build/demo/predict, 2,4)
#
# Needs /usr/bin/python3 with python3-torch, -torchvision and -onnx (make
# deps); exits 3 saying what is missing. About 30 s.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/demo-lib.sh"
B=${B:-build}
T=$top/$B/tandemctl
PY=/usr/bin/python3
out=$top/$B/demo/predict batches=2,4 arch=resnet34
PART="predictor, held-out ResNet-34"
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift ;;
	--batches) batches=$2; shift ;;
	*) echo "demo-predict.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
demo_need_base
$PY -c 'import torch, torchvision, onnx' 2>/dev/null ||
	need "python3-torch, python3-torchvision, python3-onnx do not load in $PY (make deps)"
# the 224x224 built-in model's training data (Documentation/predictor.md)
train224=predictor/data/r224-2026-12-03/runs.csv
if grep -q "^$arch," "$top/$train224"; then
	echo "demo (predictor): $arch is in $train224, the 224x224 model's training set: not held out" >&2
	exit 1
fi
rm -rf "$out"
mkdir -p "$out"
t0=$(date +%s)
echo "### the predictor: $arch at 224x224, held out of the 224x224 built-in model's training (not in $train224)"
echo "# $(demo_load)"
echo "# export and timing: $PY bench/predictor/profile.py --res 224 --only $arch --batches $batches"
nice -n 0 $PY "$top/bench/predictor/profile.py" --res 224 --only "$arch" --batches "$batches" \
	--out "$out/prof" >"$out/profile.txt" 2>&1 || {
	tail -n 20 "$out/profile.txt"; echo "demo (predictor): profile.py failed" >&2; exit 1; }
onnx=$out/prof/onnx/$arch.onnx
[ -s "$onnx" ] || { echo "demo (predictor): no $onnx" >&2; exit 1; }
echo "# the graph: $(du -k "$onnx" | cut -f1) KiB of ONNX (no weights); tandemctl predict $onnx --batch B"
printf '%6s %15s %15s %8s %22s %18s\n' batch "predicted (s)" "measured (s)" error "measured min / MAD (s)" "heldout.csv (s)"
errs=()
while IFS=, read -r _ _ _ batch _ _ _ _ t tmin tmad _; do
	p=$("$T" -j predict "$onnx" --batch "$batch" 2>"$out/predict-$batch.err" | tee "$out/predict-$batch.json" | jq -r .compute_s)
	if [ -z "$p" ] || [ "$p" = null ]; then cat "$out/predict-$batch.err"; echo "demo (predictor): predict failed" >&2; exit 1; fi
	e=$(awk -v p="$p" -v t="$t" 'BEGIN { printf "%+.1f", 100 * (p - t) / t }')
	errs+=("$e")
	h=$(awk -F, -v a="$arch" -v b="$batch" '$1 == a && $4 == b { print $9 }' "$top/${train224%/*}/heldout.csv")
	printf '%6s %15.3f %15.3f %7s%% %12.3f / %.3f %18s\n' "$batch" "$p" "$t" "$e" "$tmin" "$tmad" "${h:--}"
done < <(grep -v '^#\|^arch,' "$out/prof/runs.csv")
jq -r '"# model: \(.model)", (.warnings[]? | "# predict warns: \(.)")' "$out/predict-${batches%%,*}.json" 2>/dev/null
case $(jq -r .model "$out/predict-${batches%%,*}.json") in
*224*) ;;
*) echo "demo (predictor): predict did not pick the 224x224 built-in model" >&2; exit 1 ;;
esac
echo "(heldout.csv: the same iterations measured on the predictor's training host, idle, 2026-12-03; this run's load is on the lines above and below)"
mae=$(printf '%s\n' "${errs[@]}" | awk '{ s += $1 < 0 ? -$1 : $1; n++ } END { printf "%.1f", n ? s / n : 0 }')
echo "mean |error| over ${#errs[@]} batch sizes: $mae% (the predictor's leave-one-architecture-out MAPE at 224x224 on its training host: 13.7%, Documentation/predictor.md)"
demo_row "$PART" "predicted, batches $batches" "measured here" "mean |error| $mae%"
echo "# $(demo_load); the predictor part took $(($(date +%s) - t0)) s"
