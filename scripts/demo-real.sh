#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo, part 1: staggering real PyTorch jobs. Three unchanged training
# jobs that differ (examples/pytorch/train.py: mobilenet_v3_small batch 32,
# shufflenet_v2_x0_5 batch 64 and batch 32; 2 epochs at 32 px, 2 DataLoader
# workers each: bench/realjobs/jobs.sh's scenario "three") share one JPEG
# dataset (2000 images, 96 MiB: measure.sh's dataset a) on a real throttled
# store on this host (scripts/loopstore.sh: ext4 on a loop device, 10 MiB/s
# cgroup-v1 blkio read cap), with the BPF tracker: `tandemctl calibrate`,
# then `tandemctl run --stagger auto` against simultaneous start, REPS pairs
# interleaved (the order alternating), each run on a cold store. Prints every
# run, the medians and ranges and whether the difference is larger than the
# run-to-run spread, and writes the model's M(delta) plot with the measured
# points on it.
#
#   scripts/demo-real.sh [--out DIR] [--reps N]   (default build/demo/real, 3)
#
# Needs root, loop devices, cgroup-v1 blkio, BTF, and python3-torch,
# -torchvision, -pil for /usr/bin/python3 (make deps installs them). When
# one is missing it says which and exits 3. Leaves nothing behind: no job,
# mount, loop device, cgroup or pin. About 5 minutes on an idle 2-core
# machine (calibrate with one warm run instead of its default 3, about 1
# minute; each run about 25 s).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/demo-lib.sh"
B=${B:-build}
T=$top/$B/tandemctl
LS=$top/scripts/loopstore.sh
PY=/usr/bin/python3
out=$top/$B/demo/real reps=3
PART="staggering, 3 real PyTorch jobs"
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift ;;
	--reps) reps=$2; shift ;;
	*) echo "demo-real.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
demo_need_base
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
MNT=$tmp/mnt
cleanup() {
	pkill -f "train.py $MNT/" 2>/dev/null
	"$T" tracker unload >/dev/null 2>&1
	rm -rf "$TANDEM_TRACKER_DIR" 2>/dev/null
	"$LS" down "$S" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)
CAP=10M
echo "### a throttled store on this host ($CAP/s, ext4 on a loop device) and three PyTorch jobs that differ"
echo "# $(demo_load)"
"$LS" up --size 192 --bps $CAP --dir "$MNT" --name $S >/dev/null 2>"$out/loopstore.err" || {
	cat "$out/loopstore.err"; echo "demo (real jobs): the store could not be set up" >&2; exit 1; }
# measure.sh's dataset a (the same seed): 4 classes x 500 JPEGs of 256 px
$PY "$top/examples/pytorch/gen_dataset.py" "$MNT/a/train" --classes 4 --per-class 500 --size 256 \
	--noise 0.2 --seed "$(printf %d "'a")" || { echo "demo (real jobs): gen_dataset.py failed" >&2; exit 1; }
sync -f "$MNT"
. "$top/bench/realjobs/jobs.sh"	# ds, jobs_of, insts_of
JOBS=$(jobs_of three) INSTS=$(insts_of three)
echo "$JOBS" | sed 's/ ::: /\n/g' | sed "s|$top/||; s|$MNT/||" | awk '{ print "job j" NR - 1 ": " $0 }'
inside() { "$LS" exec $S -- "$@"; }

echo "### tandemctl calibrate (one warm run of each job with the tracker, the jobs together, the store's bandwidth)"
c0=$(date +%s)
# shellcheck disable=SC2086
inside "$T" calibrate --dataset "$ds" --sample 0 --warm-time 30s --warm-runs 1 $INSTS \
	-o "$out/profile.json" -- $JOBS >"$out/calibrate.txt" 2>&1 || {
	tail -n 20 "$out/calibrate.txt"; echo "demo (real jobs): calibrate failed" >&2; exit 1; }
jq -r '"store: \(.storage.bandwidth_bps | map(. / 1048576 * 10 | round / 10 | tostring) | join(", ")) MiB/s (1, 2, ... readers); dataset \(.dataset.bytes / 1048576 * 10 | round / 10) MiB, \(.dataset.files) files",
       (.instances[] | "job \(.name): \(.rate_bps / 1048576 * 10 | round / 10) MiB/s warm, start-up \(.startup_s * 100 | round / 100) s"),
       "CPU contention \(.host.cpu_contention * 1000 | round / 1000) per co-runner"' \
	"$out/profile.json" 2>/dev/null | sed 's/^/# /' | tee "$out/calibration.txt"
echo "# calibrate took $(($(date +%s) - c0)) s"

run_one() { # run_one REP STAGGER: one run on a cold store, its report in runs.jsonl
	local l0
	l0=$(cut -d' ' -f1 /proc/loadavg)
	"$LS" drop $S >/dev/null 2>&1
	# shellcheck disable=SC2086
	inside "$T" run --dataset "$ds" --profile "$out/profile.json" --stagger "$2" --no-register \
		--report "$out/r.json" -- $JOBS >"$out/run-$1-$2.txt" 2>&1 || {
		tail -n 20 "$out/run-$1-$2.txt"; echo "demo (real jobs): run --stagger $2 failed" >&2; return 1; }
	jq -c --arg st "$2" --argjson rep "$1" --arg l0 "$l0" \
		'. + {demo_schedule: $st, demo_rep: $rep, demo_load: $l0}' "$out/r.json" >>"$out/runs.jsonl"
	jq -r --arg st "$2" --argjson rep "$1" --arg l0 "$l0" '
	  def f: (. * 100 | round / 100 | tostring);
	  "\($rep)  \(if $st == "auto" then "--stagger auto    " else "simultaneous start" end)  released at \([.instances[].start_s - .instances[0].start_s | f] | join(", ")) s  measured \(.measured_makespan_s | f) s  predicted \(.predicted_makespan_s | f) s  (load \($l0))"' "$out/r.json"
}
echo "### tandemctl run: --stagger auto and simultaneous start, $reps pairs interleaved, each run on a cold store"
for rep in $(seq "$reps"); do
	if [ $((rep % 2)) = 1 ]; then order="auto 0"; else order="0 auto"; fi
	for st in $order; do run_one "$rep" "$st" || exit 1; done
done

echo
jq -s -r 'map(select(.demo_schedule == "auto")) | first | .search |
  "model: its best schedule predicted \(.best_makespan_s * 100 | round / 100) s against \(.together_makespan_s * 100 | round / 100) s for simultaneous start (predicted gain \(.gain * 1000 | round / 10)%)"' \
	"$out/runs.jsonl" | tee "$out/table.txt"
jq -s -r '"model error |predicted - measured| / measured over these \(length) runs: mean \(map(.error | fabs) | add / length * 1000 | round / 10)%"' \
	"$out/runs.jsonl" | tee -a "$out/table.txt"
mapfile -t A < <(jq -r 'select(.demo_schedule == "auto") | .measured_makespan_s' "$out/runs.jsonl")
mapfile -t Z < <(jq -r 'select(.demo_schedule == "0") | .measured_makespan_s' "$out/runs.jsonl")
demo_compare "--stagger auto" "${A[@]}" -- "simultaneous start" "${Z[@]}" >"$out/compare.txt"
tee -a "$out/table.txt" <"$out/compare.txt"
# auto's schedule: when it released every job at once, both series ran the
# same schedule and their difference is noise whatever its size
same=$(jq -s '[.[] | select(.demo_schedule == "auto") | (.instances | map(.start_s) | max - min)] | max < 0.05' "$out/runs.jsonl")
if [ "$same" = true ]; then
	echo "(--stagger auto chose simultaneous start: both series ran the same schedule, so their difference is run-to-run noise)" |
		tee -a "$out/table.txt"
	DEMO_GAIN="none: auto chose simultaneous start"
fi
read -r am _ _ <<<"$(demo_stats "${A[@]}")"
read -r zm _ _ <<<"$(demo_stats "${Z[@]}")"
demo_row "$PART" "auto: median $am s" "simultaneous: $zm s" "$DEMO_GAIN"

jq -r '"\(.instances[1].start_s - .instances[0].start_s),\(.measured_makespan_s)"' "$out/runs.jsonl" >"$out/measured.csv"
hi=$(jq -s '[.[] | .instances[1].start_s - .instances[0].start_s] | max + 4 | ceil' "$out/runs.jsonl")
for ext in svg png; do
	"$T" model --profile "$out/profile.json" --grid "0:$hi:0.25" --plot "$out/m.$ext" \
		--measured "$out/measured.csv" >"$out/model.txt" 2>&1 || break
done
if [ -s "$out/m.svg" ]; then
	echo "plot of M(delta) (the second job's stagger) with the measured points: $out/m.svg (and m.png)"
else
	echo "plot not written: $(tail -n 1 "$out/model.txt")"
fi
echo "reports (JSON): $out/runs.jsonl; profile: $out/profile.json; the jobs' output: $out/run-*.txt"
echo "# $(demo_load); the real-jobs part took $(($(date +%s) - t0)) s"
