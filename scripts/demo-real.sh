#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo, part 1: the main job as users run it. Two unchanged PyTorch
# training jobs (examples/pytorch/train.py: ImageFolder, DataLoader with 2
# workers) share one JPEG dataset on a real throttled store on this host
# (scripts/loopstore.sh: ext4 on a loop device, cgroup-v1 blkio cap), with
# the BPF tracker: `tandemctl calibrate`, then `tandemctl run --stagger auto`
# against simultaneous start and a few fixed staggers, each on a cold store;
# the table of predicted against measured makespans and sharing counts, and
# the model's M(delta) plot with the measured points on it.
#
#   scripts/demo-real.sh [--out DIR]        (default DIR: build/demo/real)
#
# Needs root, loop devices, cgroup-v1 blkio, BTF, and python3-torch,
# -torchvision, -pil for /usr/bin/python3 (make deps installs them). When
# one is missing it says which and exits 3 (make demo goes on with the VM
# part). Leaves nothing behind: no job, mount, loop device, cgroup or pin.
# About 4 minutes on an idle 2-core machine.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-build}
T=$top/$B/tandemctl
LS=$top/scripts/loopstore.sh
PY=/usr/bin/python3
out=$top/$B/demo/real
[ "${1:-}" = --out ] && out=$2
need() { echo "demo (real jobs): skipped: $*"; exit 3; }
[ -x "$T" ] || need "$T missing: run make"
command -v jq >/dev/null || need "jq missing (make deps)"
[ "$(id -u)" = 0 ] || need "needs root (loop device, blkio cgroup, BPF)"
[ -w /sys/fs/cgroup/blkio/cgroup.procs ] || need "no cgroup-v1 blkio controller at /sys/fs/cgroup/blkio"
[ -r /sys/kernel/btf/vmlinux ] || need "no /sys/kernel/btf/vmlinux (the tracker needs BTF)"
command -v losetup >/dev/null || need "losetup missing (util-linux)"
$PY -c 'import torch, torchvision, PIL' 2>/dev/null ||
	need "python3-torch, python3-torchvision, python3-pil do not load in $PY (make deps)"

rm -rf "$out"
mkdir -p "$out"
tmp=$(mktemp -d /var/tmp/tandem-demo-real-XXXXXX)
export LOOPSTORE_STATE=$tmp/state LOOPSTORE_IMGDIR=$tmp/img
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-demo-$$
S=demo$$
mnt=$tmp/mnt
cleanup() {
	pkill -f "train.py $mnt/" 2>/dev/null
	"$T" tracker unload >/dev/null 2>&1
	rm -rf "$TANDEM_TRACKER_DIR" 2>/dev/null
	"$LS" down "$S" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)
n=$(pgrep -c qemu-system || true)
[ "${n:-0}" -gt 0 ] && echo "note: $n VM(s) running on this machine: timings will be slower and noisier"
# The embedded default, Documentation/validation.md's real jobs: a 10 MiB/s
# store and 4 classes x 500 JPEGs of 256 px; job "slow" (mobilenet_v3_small,
# batch 32) waits on its CPU, job "fast" (shufflenet_v2_x0_5, batch 64) on the
# store; 2 epochs each, at 32 px, 2 DataLoader workers each.
CAP=10M
echo "### real jobs: a throttled store on this host ($CAP/s, ext4 on a loop device), two PyTorch jobs"
"$LS" up --size 192 --bps $CAP --dir "$mnt" --name $S >/dev/null 2>"$out/loopstore.err" || {
	cat "$out/loopstore.err"; echo "demo (real jobs): the store could not be set up" >&2; exit 1; }
ds=$mnt/train
$PY "$top/examples/pytorch/gen_dataset.py" "$ds" --classes 4 --per-class 500 --size 256 \
	--noise 0.2 || { echo "demo (real jobs): gen_dataset.py failed" >&2; exit 1; }
sync
job() { # job ARCH BATCH SEED
	echo "$PY $top/examples/pytorch/train.py $ds --arch $1 --size 32 --batch-size $2 --workers 2 --epochs 2 --seed $3"
}
A=$(job mobilenet_v3_small 32 1)
B=$(job shufflenet_v2_x0_5 64 2)
echo "A (slow): $A"
echo "B (fast): $B"
inside() { "$LS" exec $S -- "$@"; }

echo "### tandemctl calibrate (warm runs of each job with the tracker, then both together; the store's bandwidth)"
# shellcheck disable=SC2086
inside "$T" calibrate --dataset "$ds" --sample 0 --warm-time 30s \
	--instance name=slow,order=indep,epochs=2,seed=1 --instance name=fast,order=indep,epochs=2,seed=2 \
	-o "$out/profile.json" \
	-- $A ::: $B >"$out/calibrate.txt" 2>&1 || {
	tail -n 20 "$out/calibrate.txt"; echo "demo (real jobs): calibrate failed" >&2; exit 1; }
jq -r '"store: \(.storage.bandwidth_bps | map(. / 1048576 * 10 | round / 10 | tostring) | join(", ")) MiB/s (1, 2 readers); dataset \(.dataset.bytes / 1048576 * 10 | round / 10) MiB, \(.dataset.files) files",
       (.instances[] | "instance \(.name): \(.rate_bps / 1048576 * 10 | round / 10) MiB/s warm, start-up \(.startup_s * 100 | round / 100) s, \(.streams) read streams"),
       "CPU contention \(.host.cpu_contention * 1000 | round / 1000) per co-runner" + (if .host.contention then " (both jobs together: CPU x\(.host.contention.instances | map(.cpu_ratio * 100 | round / 100 | tostring) | join(", x")) of alone)" else " (not measured)" end)' \
	"$out/profile.json" 2>/dev/null | tee "$out/calibration.txt"

# one run per schedule, each on a cold store; the report of each in runs.jsonl
run_one() { # run_one KIND STAGGER
	"$LS" drop $S >/dev/null 2>&1
	# shellcheck disable=SC2086
	inside "$T" run --dataset "$ds" --profile "$out/profile.json" --stagger "$2" \
		--report "$out/r.json" -- $A ::: $B >"$out/run-$1-$2.txt" 2>&1 || {
		tail -n 20 "$out/run-$1-$2.txt"; echo "demo (real jobs): run --stagger $2 failed" >&2; return 1; }
	jq -c --arg kind "$1" '{kind: $kind} + .' "$out/r.json" >>"$out/runs.jsonl"
	jq -r --arg kind "$1" '"\($kind): B released at +\((.instances[1].start_s - .instances[0].start_s) * 100 | round / 100) s, measured \(.measured_makespan_s * 100 | round / 100) s, predicted \(.predicted_makespan_s * 100 | round / 100) s"' "$out/r.json"
}
echo "### tandemctl run: --stagger auto, simultaneous start, 3 s and 6 s (each on a cold store)"
run_one auto auto || exit 1
for x in 0 3 6; do run_one grid $x || exit 1; done

{
	printf '\n%-20s %11s %12s %11s %7s   %-24s %-24s\n' schedule "B released" "predicted M" "measured M" error \
		"slow: miss/own/shared MiB" "fast: miss/own/shared MiB"
	jq -r '
	  def f: (. * 100 | round / 100 | tostring);
	  def mib: ((. * 4096 / 1048576 * 10 | round) / 10 | tostring);
	  [(if .kind == "auto" then "--stagger auto" elif (.instances[1].start_s - .instances[0].start_s) < 0.05 then "simultaneous start" else "--stagger \(.instances[1].start_s - .instances[0].start_s | round)" end),
	   ((.instances[1].start_s - .instances[0].start_s) | f) + " s",
	   (.predicted_makespan_s | f) + " s", (.measured_makespan_s | f) + " s",
	   ((.error * 1000 | round) / 10 | tostring) + "%",
	   "\(.instances[0].misses | mib) / \(.instances[0].own_hits | mib) / \(.instances[0].shared_hits | mib)",
	   "\(.instances[1].misses | mib) / \(.instances[1].own_hits | mib) / \(.instances[1].shared_hits | mib)"] | @tsv
	' "$out/runs.jsonl" | while IFS=$'\t' read -r sch x p m e a b; do
		printf '%-20s %11s %12s %11s %7s   %-24s %-24s\n' "$sch" "$x" "$p" "$m" "$e" "$a" "$b"
	done
	echo
	jq -s -r '
	  def f: (. * 100 | round / 100 | tostring);
	  (map(select(.kind == "auto")) | first) as $a
	  | (map(select(.kind == "grid" and (.instances[1].start_s - .instances[0].start_s) < 0.05)) | first) as $z
	  | (map(.measured_makespan_s) | min) as $best
	  | "MAPE over these \(length) runs: \(map(.error | fabs) | add / length * 1000 | round / 10)%",
	    (if $a and $z then "measured: \($a.measured_makespan_s | f) s with --stagger auto vs \($z.measured_makespan_s | f) s together (\((($a.measured_makespan_s / $z.measured_makespan_s - 1) * 1000 | round) / 10)%), \((($a.measured_makespan_s / $best - 1) * 1000 | round) / 10)% from the best of these runs" else empty end),
	    (if $a and $z and (($a.instances[1].start_s - $a.instances[0].start_s) | fabs) < 0.05 then "(--stagger auto chose simultaneous start: the two rows are the same schedule, and their difference is run-to-run noise)" else empty end)
	' "$out/runs.jsonl"
} | tee "$out/table.txt"
jq -r '"\(.instances[1].start_s - .instances[0].start_s),\(.measured_makespan_s)"' "$out/runs.jsonl" >"$out/measured.csv"
hi=$(jq -s '[.[] | .instances[1].start_s - .instances[0].start_s] | max + 4 | ceil' "$out/runs.jsonl")
for ext in svg png; do
	"$T" model --profile "$out/profile.json" --grid "0:$hi:0.25" --plot "$out/m.$ext" \
		--measured "$out/measured.csv" >"$out/model.txt" 2>&1 || break
done
if [ -s "$out/m.svg" ]; then
	echo "plot of M(delta) with the measured points: $out/m.svg (and $out/m.png)"
else
	echo "plot not written: $(tail -n 1 "$out/model.txt")"
fi
echo "reports (JSON): $out/runs.jsonl; profile: $out/profile.json; the jobs' own output: $out/run-*.txt"
echo "real jobs took $(($(date +%s) - t0)) s (one run per schedule: see Documentation/validation.md for repeated runs)"
