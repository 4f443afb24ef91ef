#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What the tracker costs a real PyTorch job (examples/pytorch/train.py,
# unchanged) on this host's kernel: the job's wall time from exec to exit
# and its CPU, run by `tandemctl run` untracked (--no-track, the baseline of
# the same round) and with each tracker variant, on a cached dataset (no
# storage in it: the tracker's programs run in the job's context, so its
# time carries their cost). The mmap hook's page_fault_user program runs on
# every user page fault of a tracked process, and a training job takes
# 10^4-10^5 of them (tensors, heap, libraries): the variants compare builds.
#
#   bench/tracker/realjob.sh [--reps N] [--variant NAME=TANDEMCTL]... [--out DIR]
#                            [--arch A] [--epochs E]
#
# Default: 3 rounds, variant new=build/tandemctl, shufflenet_v2_x0_5, 1 epoch.
# Each round runs off and every variant once, in an order rotated by the
# round (interleaved), and records the load average and qemu processes
# before it. Per unit: wall (the report's end_s - start_s), CPU (user +
# system of the run and its job, /usr/bin/time), and for tracked units the
# page-fault program's run time and count (kernel.bpf_stats). The summary
# prints medians and ranges, and each variant's wall and CPU over off's of
# the same round. Needs root, BTF, /usr/bin/python3 with torch, torchvision
# and PIL, /usr/bin/time (Debian's time). A round takes 3-6 s per configuration.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
reps=3 out=$top/build/bench/tracker-realjob arch=shufflenet_v2_x0_5 epochs=1
variants=()
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--variant) variants+=("$2"); shift 2 ;;
	--out) out=$2; shift 2 ;;
	--arch) arch=$2; shift 2 ;;
	--epochs) epochs=$2; shift 2 ;;
	*) echo "usage: $0 [--reps N] [--variant NAME=TANDEMCTL]... [--out DIR] [--arch A] [--epochs E]" >&2; exit 2 ;;
	esac
done
[ ${#variants[@]} -gt 0 ] || variants=("new=$top/build/tandemctl")
[ "$(id -u)" = 0 ] || { echo "$0: needs root (BPF)" >&2; exit 1; }
$PY -c 'import torch, torchvision, PIL' 2>/dev/null ||
	{ echo "$0: needs python3-torch, python3-torchvision, python3-pil for $PY" >&2; exit 1; }
mkdir -p "$out"
ds=$out/ds/train
[ -d "$ds" ] || $PY "$top/examples/pytorch/gen_dataset.py" "$ds" --classes 4 --per-class 100 \
	--size 128 --noise 0.2 >/dev/null || exit 1
cat "$ds"/*/* >/dev/null	# cached
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-bench-realjob-$$
base=${variants[0]#*=}
res=$out/results.tsv
echo -e "round\tconfig\twall_s\tcpu_s\tfault_ns\tfault_cnt\tload1\tqemu" >"$res"
trap '"$base" tracker unload >/dev/null 2>&1; sysctl -qw kernel.bpf_stats_enabled=0' EXIT
job() { echo "$PY $top/examples/pytorch/train.py $ds --arch $arch --size 32 --batch-size 16 --workers 2 --epochs $epochs --seed 1"; }
fault_stats() {	# run_time_ns run_cnt of trk_tp_page_fault, or "- -"
	bpftool prog show 2>/dev/null | awk '/name trk_tp_page_fault/ {
		for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) }
		found = 1 } END { if (found) print t, c; else print "- -" }'
}
unit() {	# unit ROUND NAME TANDEMCTL|off
	local r=$1 name=$2 T=$3 f0 f1 wall cpu fn fc t0 c0 t1 c1
	local load qemu
	load=$(cut -d' ' -f1 /proc/loadavg)
	qemu=$(pgrep -c qemu-system 2>/dev/null || true)
	if [ "$T" = off ]; then
		# shellcheck disable=SC2046
		/usr/bin/time -o "$out/time" -f '%U %S' "$base" run --dataset "$ds" --no-track \
			--report "$out/r.json" -- $(job) >/dev/null 2>&1
		fn=- fc=-
	else
		"$T" tracker load >/dev/null || exit 1
		sysctl -qw kernel.bpf_stats_enabled=1
		f0=$(fault_stats)
		# shellcheck disable=SC2046
		/usr/bin/time -o "$out/time" -f '%U %S' "$T" run --dataset "$ds" \
			--report "$out/r.json" -- $(job) >/dev/null 2>&1
		f1=$(fault_stats)
		sysctl -qw kernel.bpf_stats_enabled=0
		"$T" tracker unload >/dev/null
		read -r t0 c0 <<<"$f0"; read -r t1 c1 <<<"$f1"
		if [ "$t1" = - ]; then fn=- fc=-; else fn=$((t1 - t0)) fc=$((c1 - c0)); fi
	fi
	wall=$(jq -r '.instances[0] | select(.exit == 0) | .end_s - .start_s' "$out/r.json")
	[ -n "$wall" ] || { echo "$0: $name: the job failed" >&2; exit 1; }
	cpu=$(awk '{ print $1 + $2 }' "$out/time")
	echo -e "$r\t$name\t$wall\t$cpu\t$fn\t$fc\t$load\t$qemu" >>"$res"
	echo "round $r $name: wall $wall s, CPU $cpu s, page-fault program ${fn} ns in ${fc} runs (load $load, qemu $qemu)"
}
configs=(off "${variants[@]}")
n=${#configs[@]}
for r in $(seq "$reps"); do
	for k in $(seq 0 $((n - 1))); do
		c=${configs[$(( (k + r) % n ))]}
		if [ "$c" = off ]; then unit "$r" off off; else unit "$r" "${c%%=*}" "${c#*=}"; fi
	done
done
echo "# $(uname -r), $(nproc) CPUs; $arch, $epochs epoch(s), 400 images cached; $reps rounds"
python3 - "$res" <<'EOF'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault(r["config"], []).append(r)
off = {r["round"]: r for r in by.get("off", [])}
def mr(v):
    return f"{st.median(v):.3f} [{min(v):.3f}-{max(v):.3f}]"
print("| config | wall (s) | CPU (s) | wall / off | CPU / off | page-fault program: ms, runs, us/run |")
print("|---|---|---|---|---|---|")
for c, rs in by.items():
    w = [float(r["wall_s"]) for r in rs]; u = [float(r["cpu_s"]) for r in rs]
    rw = [float(r["wall_s"]) / float(off[r["round"]]["wall_s"]) for r in rs if r["round"] in off]
    ru = [float(r["cpu_s"]) / float(off[r["round"]]["cpu_s"]) for r in rs if r["round"] in off]
    f = [(int(r["fault_ns"]), int(r["fault_cnt"])) for r in rs if r["fault_ns"] != "-"]
    fs = (f"{st.median([a / 1e6 for a, _ in f]):.0f}, {st.median([b for _, b in f]):.0f}, "
          f"{st.median([a / b / 1e3 for a, b in f if b]):.1f}") if f else "-"
    print(f"| {c} | {mr(w)} | {mr(u)} | {mr(rw)} | {mr(ru)} | {fs} |")
print("loads before the units:", " ".join(r["load1"] for r in rows), "; qemu:", " ".join(r["qemu"] for r in rows))
EOF
