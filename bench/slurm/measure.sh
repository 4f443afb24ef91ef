#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Real PyTorch jobs (examples/pytorch/train.py) started by a real one-node
# Slurm (selftests/lib/slurm-rig.sh) on a throttled loop store (scripts/
# loopstore.sh; slurmd runs in the store's cgroup, so every job's reads are
# capped), with the SPANK plugin and the node agent against without them.
# One unit per call, each short (one repetition of one configuration), for
# /work/bin/quiet; the rig and the agent are started and stopped inside
# each unit, so no Slurm rig outlives it (the rig lock is machine-wide):
#
#   measure.sh setup                the store and the dataset (2000 JPEGs, 92 MiB)
#   measure.sh calibrate            tandemctl calibrate on the store -> the profile
#   measure.sh profile              the profile the agent uses: calibrate's, with the
#                                   job's epochs and CPU per byte (CORES, default 1.83)
#   measure.sh solo                 one job alone: its makespan (online fractions use it)
#   measure.sh array CONF           4 jobs at once: sbatch --array=0-3, CONF none | auto | 10
#                                   (none: no --tandem-*; auto: the agent's model; 10: SECONDS)
#   measure.sh online FRAC CONF     job A, then B when A is FRAC of its solo makespan in;
#                                   CONF none | auto
#   measure.sh calibrate-three      tandemctl calibrate of the three jobs that differ
#                                   (bench/realjobs/jobs.sh's `three`) -> their profile
#   measure.sh three CONF           those three jobs, one sbatch each, submitted in turn
#                                   (the next when the last has started); each job's step
#                                   is an srun of its command, with --tandem-dataset and
#                                   --tandem-stagger=auto when CONF is auto (none: no plugin)
#   measure.sh down                 remove the store
#
# AGENT_OPTS: more options for the agent (e.g. --no-tracker), UNIT_TAG: appended to
# the array units' names for them.
# Results: one JSON line per unit in $OUT/results.jsonl (default
# build/bench/slurm), with the load average before and after;
# bench/slurm/report.py summarises them. Documentation/results/slurm.md has the numbers.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/slurm-rig.sh"
# BENCH_BIN: a copy of the build's tandemctl, tandem-agent and slurm/tandem_spank.so,
# so that a rebuild during a series does not change what it measures
BIN=${BENCH_BIN:-$top/${B:-build}}
T=$BIN/tandemctl
AGENT=$BIN/tandem-agent
SO=$BIN/slurm/tandem_spank.so
LS=$top/scripts/loopstore.sh
PY=/usr/bin/python3
EX=$top/examples/pytorch
OUT=${OUT:-$top/build/bench/slurm}
NAME=${STORE_NAME:-sl16}
BASE=${STORE_BASE:-/var/tmp/tandem-sl16}
MNT=$BASE/mnt
CAP=${CAP:-8M}
DS=$MNT/train
PROF=$BASE/profiles
# the three jobs' profile: a directory of its own (the agent takes one profile per dataset)
PROF3=$BASE/profiles-three
export LOOPSTORE_STATE=$BASE/ls-state
export TANDEM_TRACKER_DIR=${TANDEM_TRACKER_DIR:-/sys/fs/bpf/tandem-sl16}
JOBARGS="--arch shufflenet_v2_x0_5 --size 32 --batch-size 64 --workers 2 --epochs 2"
mkdir -p "$OUT" "$BASE"

load() { cut -d' ' -f1-3 /proc/loadavg; }
L0=$(load)
record() {	# UNIT JSON
	jq -c --arg unit "$1" --arg load "$L0" --arg load1 "$(load)" \
		'. + {unit: $unit, load_before: $load, load_after: $load1, time: (now | todate)}' <<<"$2" \
		>>"$OUT/results.jsonl"
	jq -c --arg unit "$1" '{unit: $unit} + .' <<<"$2" | cut -c1-400
}

# ---- one unit's rig: Slurm with slurmd in the store's cgroup, the agent ----
run_dir=""
agent_pid=""
rig_up() {	# WITH_PLUGIN (0|1)
	run_dir=$(mktemp -d /var/tmp/tandem-sl16-run-XXXXXX)
	chmod 755 "$run_dir"
	mkdir -p "$run_dir/out"
	chmod 777 "$run_dir/out"
	install -m 755 "$EX/train.py" "$run_dir/train.py"
	if [ "$1" = 1 ]; then
		install -m 755 "$SO" "$run_dir/tandem_spank.so"
		echo "optional $run_dir/tandem_spank.so socket=$run_dir/agent.sock max_hold=600" >"$run_dir/plugstack.conf"
	else
		: >"$run_dir/plugstack.conf"
	fi
	chmod 644 "$run_dir/plugstack.conf"
	echo $BASHPID >"$("$LS" path "$NAME")/cgroup.procs"
	slurm_rig_start "$run_dir" "$run_dir/plugstack.conf"
	echo $BASHPID >/sys/fs/cgroup/blkio/cgroup.procs
	if [ "$1" = 1 ]; then
		"$AGENT" --socket "$run_dir/agent.sock" --log "$run_dir/agent.log" \
			--profile-dir "${UNIT_PROF:-$PROF}" --no-module ${AGENT_OPTS:-} 2>"$run_dir/agent.err" &
		agent_pid=$!
		for _ in $(seq 100); do
			grep -q "ev=node " "$run_dir/agent.log" 2>/dev/null && break
			sleep 0.05
		done
	fi
}
rig_down() {
	slurm_rig_stop "$run_dir"
	if [ -n "$agent_pid" ]; then
		kill "$agent_pid" 2>/dev/null
		wait "$agent_pid" 2>/dev/null || true
		agent_pid=""
	fi
}
trap 'rig_down 2>/dev/null; [ -n "$run_dir" ] && rm -rf "$run_dir"' EXIT

JOB='echo start $(date +%s.%N); /usr/bin/python3 '"\$RUN/train.py $DS $JOBARGS"'; echo end $(date +%s.%N)'
submit() {	# NAME [sbatch options]
	local name=$1
	shift
	runuser -u "$RIG_USER" -- env HOME=/tmp RUN="$run_dir" sbatch --parsable -D "$run_dir/out" \
		-o "$run_dir/out/$name.out" "$@" --wrap "$JOB"
}
wait_gone() {
	for _ in $(seq 3000); do
		[ -z "$(squeue -h -o %A 2>/dev/null)" ] && return 0
		sleep 0.2
	done
	return 1
}
# every job's output, jobcomp record and the agent's lines, as one JSON document
collect() {
	local cpu=null
	# the agent's own CPU time (user + system) so far
	[ -n "$agent_pid" ] && cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$agent_pid/stat")
	$PY "$top/bench/slurm/collect.py" "$run_dir" "$RIG_JOBCOMP" |
		jq -c --argjson c "$cpu" --arg o "${AGENT_OPTS:-}" '. + {agent_cpu_s: $c, agent_opts: $o}'
}
cold() { "$LS" drop "$NAME"; }

# The three jobs that differ in speed: bench/realjobs/jobs.sh's `three` (its arguments
# and instance specs). The step's command is the calibrated one, word for word, which is
# how the agent finds the task's instance in the profile. The script is a copy every
# unit can read ($BASE).
# shellcheck source=bench/realjobs/jobs.sh
. "$top/bench/realjobs/jobs.sh"
TR3="$PY $BASE/train.py $DS --size 32 --workers 2 --epochs 2"
three_cmd() {
	case $1 in
	0) echo "$TR3 $SLOW --seed 1" ;;
	1) echo "$TR3 $FAST --seed 2" ;;
	2) echo "$TR3 $FAST32 --seed 3" ;;
	esac
}

case ${1:-} in
setup)
	"$LS" up --size 512 --bps "$CAP" --dir "$MNT" --name "$NAME" --image "$BASE/store.img"
	[ -d "$DS" ] || $PY "$EX/gen_dataset.py" "$DS" --classes 4 --per-class 500 --size 256 --noise 0.2
	# calibrate reads a flat folder: the same files (same inodes, same page cache), linked
	if [ ! -d "$MNT/flat" ]; then
		mkdir -p "$MNT/flat"
		for f in "$DS"/*/*; do
			ln "$f" "$MNT/flat/$(basename "$(dirname "$f")")-$(basename "$f")"
		done
	fi
	chmod -R a+rX "$MNT"
	mkdir -p "$PROF"
	"$LS" status "$NAME"
	;;
calibrate)
	cold
	"$LS" exec "$NAME" -- "$T" calibrate --dataset "$MNT/flat" --sample 48M --readers 2 --warm-time 12 \
		-o "$PROF/flat.json" -- $PY "$EX/train.py" "$DS" $JOBARGS
	# the jobs name the ImageFolder root: the profile is the same files under that path
	jq --arg p "$(realpath "$DS")" '.dataset.path = $p' "$PROF/flat.json" >"$BASE/train.calibrated.json"
	rm "$PROF/flat.json"
	cold
	bash "$0" profile
	;;
profile)
	# what calibrate does not know, as an administrator adds it: the job's epochs (2), and
	# its CPU per byte (CORES busy at the warm rate; 1.83 for this job with 2 workers,
	# Documentation/results/validation.md "CPU sharing"), so that the model sees 4 jobs share 2 CPUs
	jq --argjson c "${CORES:-1.83}" '.instances[0].epochs = 2 |
		.instances[0].cpu_s_per_byte = $c / .instances[0].rate_bps' \
		"$BASE/train.calibrated.json" >"$PROF/train.json"
	record calibrate "$(jq -c '{bw: .storage.bandwidth_bps, eta: .storage.eta, rate: .instances[0].rate_bps, bytes: .dataset.bytes}' "$PROF/train.json")"
	;;
solo)
	rig_up 0
	cold
	submit solo >/dev/null
	wait_gone
	record solo "$(collect)"
	rig_down
	;;
array)
	conf=${2:?array none|auto|SECONDS}
	rig_up "$([ "$conf" = none ] && echo 0 || echo 1)"
	cold
	opts=()
	[ "$conf" = none ] || opts=(--tandem-dataset="$DS" --tandem-stagger="$conf")
	runuser -u "$RIG_USER" -- env HOME=/tmp RUN="$run_dir" sbatch --parsable -D "$run_dir/out" \
		-o "$run_dir/out/ar-%a.out" --array=0-3 "${opts[@]}" --wrap "$JOB" >/dev/null
	wait_gone
	sleep 1.5	# the agent's exit grace, for its makespan line
	record "array-$conf${UNIT_TAG:-}" "$(collect)"
	rig_down
	;;
online)
	frac=${2:?online FRAC none|auto} conf=${3:?online FRAC none|auto}
	solo=$(jq -s '[.[] | select(.unit == "solo") | .makespan_s] | sort | .[length / 2 | floor]' "$OUT/results.jsonl")
	rig_up "$([ "$conf" = none ] && echo 0 || echo 1)"
	cold
	opts=()
	[ "$conf" = none ] || opts=(--tandem-dataset="$DS" --tandem-stagger=auto)
	submit A "${opts[@]}" >/dev/null
	# A's start is its first output line
	for _ in $(seq 600); do grep -q '^start' "$run_dir/out/A.out" 2>/dev/null && break; sleep 0.05; done
	t_a=$(awk '$1 == "start" { print $2 }' "$run_dir/out/A.out")
	sleep "$(awk -v s="$solo" -v f="$frac" -v a="$t_a" -v n="$(date +%s.%N)" 'BEGIN { d = s * f - (n - a); print (d > 0 ? d : 0) }')"
	submit B "${opts[@]}" >/dev/null
	wait_gone
	sleep 1.5
	record "online-$frac-$conf" "$(collect | jq -c --argjson solo "$solo" --argjson f "$frac" '. + {solo_s: $solo, frac: $f}')"
	rig_down
	;;
calibrate-three)
	install -m 755 "$EX/train.py" "$BASE/train.py"
	mkdir -p "$PROF3"
	cold
	cmds=()
	for i in 0 1 2; do
		[ "$i" = 0 ] || cmds+=(:::)
		# shellcheck disable=SC2207
		cmds+=($(three_cmd "$i"))
	done
	# shellcheck disable=SC2046
	"$LS" exec "$NAME" -- "$T" calibrate --dataset "$DS" --sample 0 --warm-time 20s --warm-runs 3 \
		$(insts_of three) -o "$PROF3/three.json" -- "${cmds[@]}" >"$BASE/calibrate-three.out" 2>&1 ||
		{ tail -n 20 "$BASE/calibrate-three.out"; exit 1; }
	cold
	record calibrate-three "$(jq -c '{bw: .storage.bandwidth_bps, eta: .storage.eta,
		rates: [.instances[].rate_bps], bytes: .dataset.bytes, path: .dataset.path}' "$PROF3/three.json")"
	# what the model says for them, released together or on its best vector
	"$T" model --profile "$PROF3/three.json" | tail -n 3
	;;
three)
	conf=${2:?three none|auto}
	[ -f "$PROF3/three.json" ] || { echo "measure.sh: run calibrate-three first" >&2; exit 1; }
	UNIT_PROF=$PROF3 rig_up "$([ "$conf" = none ] && echo 0 || echo 1)"
	cold
	opts=()
	[ "$conf" = none ] || opts=(--tandem-dataset="$DS" --tandem-stagger=auto)
	for i in 0 1 2; do
		runuser -u "$RIG_USER" -- env HOME=/tmp sbatch --parsable -D "$run_dir/out" \
			-o "$run_dir/out/j$i.out" --wrap "echo start \$(date +%s.%N); srun ${opts[*]} $(three_cmd "$i"); echo end \$(date +%s.%N)" >/dev/null
		# the next job once this one's batch script runs: the agent sees them in order
		for _ in $(seq 600); do grep -q '^start' "$run_dir/out/j$i.out" 2>/dev/null && break; sleep 0.05; done
	done
	wait_gone
	sleep 1.5
	record "three-$conf${UNIT_TAG:-}" "$(collect)"
	rig_down
	;;
down)
	"$LS" down "$NAME"
	;;
*)
	sed -n '/^#   measure.sh/s/^#   //p' "$0" >&2
	exit 2
	;;
esac
