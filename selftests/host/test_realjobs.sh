#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tandemctl calibrate, then run, on two real PyTorch jobs (examples/pytorch/
# train.py, unchanged: ImageFolder, DataLoader with 2 workers, 2 epochs) over
# a real throttled store (scripts/loopstore.sh: ext4 on a loop device, blkio
# cap), with the host's BPF tracker:
#  - calibrate's warm runs measure each job's terms: the rate, CPU per byte,
#    start-up (at least the first read, which the import of torch puts past
#    0.3 s), the read-ahead and 2 read streams (the loader's 2 workers: the
#    job's own --workers), and the profile records them;
#  - run --profile on the cold store: both jobs end well and print their 2
#    epochs (their own output), B is released at the requested offset
#    (+-50 ms), the model's prediction has the jobs' start-ups in it, the
#    tracker's misses add up to the dataset's pages (stat) and fincore sees
#    them cached after, and the report's error is measured / predicted - 1
#    (how large it is: measured under /work/bin/quiet, validation.md);
#  - nothing is left: no job, no mount, no loop device, no cgroup.
# Needs root, loop devices, cgroup-v1 blkio, BTF, python3-torch/-torchvision/
# -pil for /usr/bin/python3. About 60 s (34 s calibrate: 3 warm runs a job, 3 of both together; 20 s run).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
LS=$top/scripts/loopstore.sh
PY=/usr/bin/python3
N=16
ksft_plan $N
skip_all() { ksft_skip_rest "real jobs" "$1"; }
[ -x "$T" ] && command -v jq >/dev/null && command -v fincore >/dev/null ||
	skip_all "needs $T, jq and fincore"
[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -w /sys/fs/cgroup/blkio/cgroup.procs ] || skip_all "needs the cgroup-v1 blkio controller"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs /sys/kernel/btf/vmlinux"
command -v losetup >/dev/null || skip_all "needs losetup"
$PY -c 'import torch, torchvision, PIL' 2>/dev/null ||
	skip_all "needs python3-torch, python3-torchvision, python3-pil for $PY"
tmp=$(mktemp -d /var/tmp/tandem-realjobs-XXXXXX)
export LOOPSTORE_STATE=$tmp/state LOOPSTORE_IMGDIR=$tmp/img
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-realjobs-$$
S=rj$$
mnt=$tmp/mnt
cleanup() {
	"$T" tracker unload >/dev/null 2>&1
	"$LS" down "$S" >/dev/null 2>&1
	if [ -n "${KEEP:-}" ]; then echo "# kept $tmp"; rm -rf "$tmp/img"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
CAP=4M
"$LS" up --size 48 --bps $CAP --dir "$mnt" --name $S >/dev/null 2>"$tmp/up.err" ||
	{ cat "$tmp/up.err"; skip_all "loopstore up failed"; }
ds=$mnt/train
# 4 classes x 100 JPEGs of 128 px: 4.8 MiB, 1.2 s at the cap
$PY "$top/examples/pytorch/gen_dataset.py" "$ds" --classes 4 --per-class 100 --size 128 \
	--noise 0.2 >"$tmp/gen.out" || { ksft_diag "gen failed"; exit 1; }
sync
read -r P ds_bytes < <(find "$ds" -type f -exec stat -c %s {} + |
	awk '{ p += int(($1 + 4095) / 4096); b += $1 } END { print p, b }')
ksft_diag "$(cat "$tmp/gen.out"); $P pages"
job() {	# job ARCH SEED
	echo "$PY $top/examples/pytorch/train.py $ds --arch $1 --size 32 --batch-size 16 --workers 2 --epochs 2 --seed $2"
}
A=$(job shufflenet_v2_x0_5 1)
B=$(job mobilenet_v3_small 2)
inside() { "$LS" exec $S -- "$@"; }

# 1-5: calibrate (inside the store's cgroup, as the jobs will run)
t0=$(date +%s.%N)
# shellcheck disable=SC2086
inside "$T" -j calibrate --dataset "$ds" --sample 2M --bw-time 0.5 --warm-time 3s \
	--instance name=A,epochs=2 --instance name=B,epochs=2 -o "$tmp/prof.json" \
	-- $A ::: $B >"$tmp/cal.out" 2>"$tmp/cal.err"
rc=$?
cal_s=$(echo "$(date +%s.%N) - $t0" | bc)
cat "$tmp/cal.err"
ksft_diag "calibrate ${cal_s} s: $(jq -c '[.instances[] | {name, rate_bps, cpu_s_per_byte, startup_s, startup_cpu_s, epoch_gap_s, streams, window_bytes, first: .warm_run.first_read_s}]' "$tmp/prof.json" 2>/dev/null)"
pq() { jq -r "$@" "$tmp/prof.json" 2>/dev/null; }
ksft_check "calibrate: exit 0, both jobs measured by warm runs with the tracker" \
	test $rc -eq 0 -a "$(pq '[.instances[] | select(.rate_source == "warm" and .warm_run.method == "tracker")] | length')" = 2
# the read-ahead is the steady line back at the first read, clamped at 0
# (model.md): where the first, slower batches lost more than the loader ran
# ahead it is 0, which CI saw once (2026-12-02; epochs of 1.1 s here), so
# it is checked as measured, not as positive
ksft_check "calibrate: each job's rate and CPU per byte > 0, its busiest process's CPU per byte in (0, its CPU per byte], its read-ahead measured (no window= given) and within one epoch's bytes" \
	test "$(pq --argjson ds "$ds_bytes" '[.instances[] | select(.rate_bps > 0 and .cpu_s_per_byte > 0 and .cpu_task_s_per_byte > 0 and .cpu_task_s_per_byte <= .cpu_s_per_byte and .warm_run.window_measured == true and .window_bytes >= 0 and .window_bytes <= $ds)] | length')" = 2
ksft_check "calibrate: start-up >= first read > 0.3 s (python, import torch), CPU in it > 0" \
	test "$(pq '[.instances[] | select(.startup_s >= .warm_run.first_read_s and .warm_run.first_read_s > 0.3 and .startup_cpu_s > 0)] | length')" = 2
# the exit: SIGINT to the job's end (a Python job unwinds and tears down: more
# than 50 ms); or, where the warm run ended by itself after its last epoch,
# that end less its last read and the step's W / R (model.md), which can be
# 0 where W / R covers it; else not measured
ksft_check "calibrate: each job's exit from SIGINT between 50 ms and 3 s, from its own end in [0, 3 s), or not measured and 0" \
	test "$(pq '[.instances[] | select((.warm_run.exit_from == "sigint" and .warm_run.exit_measured and .exit_s > 0.05 and .exit_s < 3) or (.warm_run.exit_from == "end" and .warm_run.exit_measured and .exit_s >= 0 and .exit_s < 3) or (.warm_run.exit_measured == false and .warm_run.exit_from == null and .exit_s == 0))] | length')" = 2
# --warm-runs' default: 3 runs per command, the rate their median
ksft_check "calibrate: 3 warm runs per job (the default), the rate within their range" \
	test "$(pq '[.instances[] | select(.warm_run.runs == 3 and .warm_run.rate_min_bps <= .rate_bps and .rate_bps <= .warm_run.rate_max_bps and (.warm_run.epoch2_seen | type) == "boolean")] | length')" = 2
ksft_expect_eq "calibrate: 2 read streams per job (its --workers 2)" \
	"$(pq '[.instances[].streams] | join(" ")')" "2 2"
# the two jobs at once (model.md, "CPU contention"): each one's CPU over the
# window in which both read against its own on the same reads alone. Two
# jobs on two cores cost each other little (validation.md: 1.00-1.08 on
# an AMD EPYC host), but where the two CPUs are one core's two hardware
# threads each runs at about 0.6 of its speed alone: the CI host of
# 2026-12-07 measured 1.33 and 1.62 (C 0.46). So a ratio up to 2.5 (SMT's
# 2x and caches) and C up to 1.5 (n = 2: the ratio less 1) are a host's;
# outside them, or below 0.7, the measurement is wrong.
ksft_diag "contention: $(pq -c '.host'); CPUs: $(lscpu 2>/dev/null | awk -F: '/^(Model name|Thread\(s\) per core|Core\(s\) per socket)/ { gsub(/^ +/, "", $2); printf "%s=%s; ", $1, $2 }')"
ksft_check "calibrate: 3 runs of both jobs together, each one's CPU ratio in [0.7, 2.5], cpu_contention = max(measured, 0) in [0, 1.5], the same in calibrate's output" \
	test "$(pq '.host as $h | $h.contention | select(.runs == 3 and (.instances | map(.name)) == ["A", "B"] and all(.instances[]; .cpu_ratio >= 0.7 and .cpu_ratio <= 2.5) and .min <= .measured and .measured <= .max and $h.cpu_contention == ([.measured, 0] | max) and $h.cpu_contention <= 1.5 and .window_s >= 1) | "ok"')" = ok \
	-a "$(jq -r '.cpu_contention' "$tmp/cal.out" 2>/dev/null)" = "$(pq '.host.cpu_contention')"

# 6-11: run at a stagger of 2 s on the cold store
"$LS" drop $S >/dev/null 2>&1
c0=$(find "$ds" -type f -exec fincore -b -n -o PAGES {} + | awk '{ p += $1 } END { print p + 0 }')
# shellcheck disable=SC2086
inside "$T" run --dataset "$ds" --profile "$tmp/prof.json" --stagger 2 --report "$tmp/r.json" \
	-- $A ::: $B >"$tmp/run.out" 2>"$tmp/run.err"
rc=$?
c1=$(find "$ds" -type f -exec fincore -b -n -o PAGES {} + | awk '{ p += $1 } END { print p + 0 }')
q() { jq -r "$1" "$tmp/r.json" 2>/dev/null; }
ksft_diag "run: $(q '"M \(.measured_makespan_s) predicted \(.predicted_makespan_s) error \(.error)"')"
q '.instances[] | "\(.name): start \(.start_s) end \(.end_s) misses \(.misses) own \(.own_hits) shared \(.shared_hits) evicted \(.evicted) predicted end \(.predicted_end_s)"' |
	while read -r l; do ksft_diag "$l"; done
ksft_check "run: exit 0, both jobs exited 0, each printed its 2 epochs" \
	test $rc -eq 0 -a "$(q '[.instances[] | select(.state == "exited" and .exit == 0)] | length')" = 2 \
	-a "$(grep -c '^epoch [12]/2: .* 400 images' "$tmp/run.out")" = 4
# cpu_s: the leader's rusage at wait4, its reaped workers in it; a job that
# imported torch and trained used more than its start-up's CPU alone
ksft_check "run: each job's cpu_s (its rusage) > the start-up CPU calibrate measured ($(q '[.instances[].cpu_s] | map(. * 100 | round / 100) | join(" ")') s)" \
	test "$(jq -s '.[0] as $p | .[1] | [range(2) as $i | .instances[$i] |
		select(.cpu_s > $p.instances[$i].startup_cpu_s)] | length' "$tmp/prof.json" "$tmp/r.json")" = 2
ksft_check "run: B released 2 s after A (+-50 ms)" \
	test "$(q '(.instances[1].start_s - .instances[0].start_s - 2) | fabs < 0.05')" = true
# a page the host evicted meanwhile (reclaim; DAMON runs on this host) and
# read again is a second miss: CI saw 1549 misses for 1514 pages once
# (2026-12-02), so the misses are checked against the pages plus the
# evictions the tracker counted (the report's `evicted`)
ev=$(q '[.instances[].evicted] | add')
ksft_check "run: cold before (fincore $c0 of $P pages), the misses add up to the dataset's pages (-2%, +2% + the $ev evicted)" \
	test "$c0" -le $((P / 100)) -a "$(q "(.instances[0].misses + .instances[1].misses) as \$m |
		\$m >= $P * 0.98 - 4 and \$m <= $P * 1.02 + 4 + ([.instances[].evicted] | add)")" = true
ksft_check "run: fincore sees the dataset cached after ($c1 of $P pages)" \
	test "$c1" -ge $((P * 98 / 100))
# the model's accuracy is measured under /work/bin/quiet (Documentation/validation.md);
# here, on a shared machine, only that the report is consistent and has the terms
ksft_check "run: error = measured / predicted - 1 ($(q .error))" \
	test "$(q '(.measured_makespan_s / .predicted_makespan_s - 1 - .error) | fabs < 1e-6')" = true
ksft_check "run: each job's predicted end > its start + start-up + 2 warm epochs (the model has the terms)" \
	test "$(jq -s '.[0] as $p | .[1] | [range(2) as $i | .instances[$i] |
		select(.predicted_end_s > .start_s + $p.instances[$i].startup_s +
		       2 * $p.dataset.bytes / $p.instances[$i].rate_bps - 0.01)] | length' \
		"$tmp/prof.json" "$tmp/r.json")" = 2

# 12-13: nothing left behind
"$T" tracker unload >/dev/null 2>&1
"$LS" down $S >/dev/null 2>&1
ksft_check "no job left (no train.py of this test)" \
	eval '! pgrep -f "train.py $ds" >/dev/null'
ksft_check "no mount, loop device or cgroup left" \
	eval '! mountpoint -q "$mnt" && [ -z "$(losetup -n -O NAME -j "$tmp/img/$S.img" 2>/dev/null)" ] && [ ! -d /sys/fs/cgroup/blkio/tandem-loopstore-$S ]'
ksft_finish
