#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The agent's model deciding for jobs a real one-node Slurm starts
# (selftests/lib/slurm-rig.sh), on a real throttled store (scripts/
# loopstore.sh: ext4 on a loop device, blkio-capped; slurmd runs in the
# store's cgroup, so every job's reads are throttled). The dataset's profile
# is measured on the store by `tandemctl calibrate` (B(1), B(2), the job's
# rate from a warm run); the jobs are `tandemctl loadgen` runs (real reads,
# a sleep per batch) submitted as an unprivileged user with sbatch.
#   - a job array of three at once: each released as the agent decided
#     (its start from its own first output line against ev=release,
#     +-100 ms), a decision with its predicted makespan per task, all
#     COMPLETED in jobcomp, predicted against measured makespan in the log;
#   - online: a second job submitted while the first is part-way: the
#     decision sees the first running with the bytes the tracker counted
#     (checked against what the store can have delivered by then);
#   - a profile whose store loses bandwidth under concurrency (B(2) set to
#     0.3 B(1) on a second dataset): the second job is held for the time the
#     offline model (`tandemctl model`) gives, and starts then;
#   - `tandemctl agent status` shows the held task; the agent's metrics and
#     `tandemctl stats --prometheus --textfile` pass promtool with the
#     tracker's counters of the Slurm jobs; nothing is left behind.
# About 40 s. SKIP (4) without root, Slurm, blkio or BTF.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
. "$top/selftests/lib/slurm-rig.sh"
. "$top/selftests/lib/tracker-pins.sh"
B=${B:-build}
AGENT=${TANDEM_AGENT:-$top/$B/asan/tandem-agent}
T=$top/$B/tandemctl
SO=$top/$B/slurm/tandem_spank.so
LS=$top/scripts/loopstore.sh
TOL_MS=100
CAP=16	# MiB/s, the store's read cap
NTESTS=17

ksft_plan $NTESTS
why=""
[ "$(id -u)" -eq 0 ] || why="needs root"
[ -z "$why" ] && ! slurm_rig_installed && why="Slurm (slurmctld slurmd slurm-client munge) not installed"
[ -z "$why" ] && [ ! -f "$SO" ] && why="no $SO (libslurm-dev missing at build time)"
[ -z "$why" ] && { [ ! -x "$AGENT" ] || [ ! -x "$T" ]; } && why="no $AGENT or $T"
[ -z "$why" ] && [ ! -w /sys/fs/cgroup/blkio/cgroup.procs ] && why="needs the cgroup-v1 blkio controller"
[ -z "$why" ] && [ ! -r /sys/kernel/btf/vmlinux ] && why="needs BTF for the tracker"
[ -z "$why" ] && ! command -v promtool >/dev/null && why="needs promtool"
if [ -n "$why" ]; then
	for i in $(seq $NTESTS); do ksft_skip "slurm model $i" "$why"; done
	ksft_finish
fi

tmp=$(mktemp -d /var/tmp/tandem-slmodel-XXXXXX)
export LOOPSTORE_STATE=$tmp/ls-state LOOPSTORE_IMGDIR=$tmp/ls-img
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-slmodel-$$
STORE=slm$$
agent_pid=""
stop_agent() {
	[ -n "$agent_pid" ] || return 0
	kill -TERM "$agent_pid" 2>/dev/null
	wait "$agent_pid" 2>/dev/null
	agent_pid=""
}
cleanup() {
	slurm_rig_stop "$tmp"
	stop_agent
	"$LS" down "$STORE" >/dev/null 2>&1
	tracker_pins_gone "$T"
	[ -n "${TANDEM_KEEP:-}" ] && echo "# kept $tmp" && return
	rm -rf "$tmp"
}
trap cleanup EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/out" "$tmp/metrics" "$tmp/profiles" "$tmp/stats"
chmod 777 "$tmp/out"
install -m 755 "$SO" "$tmp/tandem_spank.so"
install -m 755 "$T" "$tmp/tandemctl"
echo "optional $tmp/tandem_spank.so socket=$tmp/agent.sock max_hold=60" >"$tmp/plugstack.conf"
chmod 644 "$tmp/plugstack.conf"
LOG=$tmp/agent.log

fail_all() {
	ksft_diag "$1"
	for i in $(seq $NTESTS); do ksft_fail "slurm model $i (no rig)"; done
	ksft_finish
}

# the store, two datasets on it, and the measured profile of the first
"$LS" up --size 128 --bps ${CAP}M --dir "$tmp/mnt" --name "$STORE" >"$tmp/ls.out" 2>&1 ||
	fail_all "loopstore: $(tail -n 3 "$tmp/ls.out")"
DS=$tmp/mnt/ds DS2=$tmp/mnt/ds2
"$T" loadgen gen "$DS" --files 48 --size 1M >/dev/null && "$T" loadgen gen "$DS2" --files 32 --size 1M >/dev/null ||
	fail_all "loadgen gen failed"
chmod -R a+rX "$tmp/mnt"
# one job: 1 MiB samples, 25 ms of "compute" each (40 MiB/s cached), two reader threads
LGARGS="--epochs 1 --threads 2 --queue 4 --batch 1 --compute 25ms"
JOBCMD="$tmp/tandemctl loadgen $DS $LGARGS"
"$LS" drop "$STORE"
"$LS" exec "$STORE" -- "$T" calibrate --dataset "$DS" --sample 12M --readers 2 --warm-time 3 \
	-o "$tmp/profiles/ds.json" -- $JOBCMD >"$tmp/cal.out" 2>&1 || fail_all "calibrate: $(tail -n 3 "$tmp/cal.out")"
ksft_diag "profile: $(grep -E 'B\(1\)|instance' "$tmp/cal.out" | tr '\n' ' ')"
# the second dataset's profile: the same, on a store that would lose bandwidth
jq --arg p "$(realpath "$DS2")" --argjson b "$(jq '.storage.bandwidth_bps[0]' "$tmp/profiles/ds.json")" \
	'.dataset.path = $p | .dataset.bytes = 33554432 | .dataset.files = 32 |
	 .storage.bandwidth_bps = [$b, 0.3 * $b]' "$tmp/profiles/ds.json" >"$tmp/profiles/ds2.json"

start_agent() {
	"$AGENT" --socket "$tmp/agent.sock" --log "$LOG" --metrics-dir "$tmp/metrics" \
		--profile-dir "$tmp/profiles" --no-module 2>>"$tmp/agent.err" &
	agent_pid=$!
	# up to 30 s: the agent loads the tracker first (5-7 s on a loaded host)
	for _ in $(seq 300); do
		grep -q "ev=node " "$LOG" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# slurmd (and so every job step) in the store's cgroup: the jobs' reads are capped
echo $BASHPID >"$("$LS" path "$STORE")/cgroup.procs"
slurm_rig_start "$tmp" "$tmp/plugstack.conf"
rig=$?
echo $BASHPID >/sys/fs/cgroup/blkio/cgroup.procs
[ $rig -eq 0 ] && start_agent || fail_all "rig or agent did not start: $(tail -n 3 "$tmp"/slurmd.log "$tmp/agent.err" 2>&1)"

# the job reads $DSDIR (sbatch passes the environment on)
JOB='echo start $(date +%s.%N); '"$tmp/tandemctl"' loadgen $DSDIR '"$LGARGS"' >/dev/null; echo end $(date +%s.%N)'
submit() {	# NAME DIR [sbatch options]: prints the job id
	local name=$1 dir=$2
	shift 2
	runuser -u "$RIG_USER" -- env DSDIR="$dir" sbatch --parsable -D "$tmp/out" \
		-o "$tmp/out/$name.out" --tandem-dataset="$dir" "$@" --wrap "$JOB"
}
wait_log() {	# REGEX [SECONDS]
	local i
	for i in $(seq $((${2:-10} * 20))); do
		grep -q -E "$1" "$LOG" && return 0
		sleep 0.05
	done
	return 1
}
wait_jobs_gone() {
	local i
	for i in $(seq 600); do
		[ -z "$(squeue -h -j "$(echo "$@" | tr ' ' ,)" -o %A 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	return 1
}
# ev_field EV JOB KEY [last]: KEY on the first (or last) "ev=EV ... job=JOB " line
ev_field() {
	awk -v ev="ev=$1" -v job="job=$2" -v key="$3=" -v last="${4:-}" \
		'$2 == ev { hit = 0; for (i = 3; i <= NF; i++) if ($i == job) hit = 1
			if (hit) for (i = 1; i <= NF; i++) if (index($i, key) == 1) { v = substr($i, length(key) + 1); if (!last) { print v; exit } } }
		 END { if (last && v != "") print v }' "$LOG"
}
out_field() { awk -v k="$2" '$1 == k { print $2; exit }' "$tmp/out/$1.out" 2>/dev/null; }
jobcomp() { awk -v id="JobId=$1" -v k="$2=" '$1 == id { for (i = 1; i <= NF; i++) if (index($i, k) == 1) print substr($i, length(k) + 1) }' "$RIG_JOBCOMP"; }
ms_diff() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", (a - b) * 1000 }'; }
within() { awk -v d="$1" -v t="$2" 'BEGIN { exit !(d <= t && d >= -t) }'; }
# makespan_line N DS: the last ev=makespan line of a group of N on DS
makespan_line() { grep "ev=makespan ds=$2 n=$1 " "$LOG" | tail -1; }
kv() { tr ' ' '\n' | awk -v k="$1=" 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }'; }
started_on_time() {	# JOBID OUTNAME: its first line within TOL_MS of its release
	local r s
	r=$(ev_field release "$1" ts)
	s=$(out_field "$2" start)
	[ -n "$r" ] && [ -n "$s" ] && within "$(ms_diff "$s" "$r")" $TOL_MS ||
		{ ksft_diag "job $1: released $r, first line $s"; return 1; }
}

# --- 1-5: a job array of three on the measured profile, submitted at once ---
"$LS" drop "$STORE"
AR=$(runuser -u "$RIG_USER" -- env DSDIR="$DS" sbatch --parsable -D "$tmp/out" -o "$tmp/out/ar-%a.out" \
	--array=0-2 --tandem-dataset="$DS" --tandem-stagger=auto --wrap "$JOB")
wait_log "ev=register .*array=${AR}_2" 15
wait_jobs_gone "$AR"
wait_log "ev=makespan ds=$DS n=3 " 5
# the tasks' jobs once all have ended: Slurm starts an array's tasks in any
# order, so task 0 may register after task 2 (CI saw 2 of 3 listed once)
mapfile -t jobs < <(awk -v a="array=${AR}_" '$2 == "ev=register" && index($0, a) { for (i = 1; i <= NF; i++) if ($i ~ /^job=/) print substr($i, 5) }' "$LOG")
ok=1 decided=0
for j in "${jobs[@]}"; do
	idx=$(jobcomp "$j" ArrayTaskId)
	started_on_time "$j" "ar-$idx" || ok=0
	[ -n "$(ev_field decide "$j" pred_ms)" ] && decided=$((decided + 1))
	ksft_diag "array task $idx (job $j): $(grep "ev=decide .*job=$j " "$LOG" | tail -1 | cut -d' ' -f6-13), released $(ev_field release "$j" reason)"
done
ksft_check "job array of 3: each task started within ${TOL_MS} ms of its release by the agent" \
	[ $ok -eq 1 -a ${#jobs[@]} -eq 3 ]
ksft_check "... each with a model decision (mode auto, a predicted makespan)" [ $decided -eq 3 ]
t_comp() { for j in "${jobs[@]}"; do [ "$(jobcomp "$j" JobState)" = COMPLETED ] || return 1; done; }
ksft_check "... all three COMPLETED in jobcomp" t_comp
line=$(makespan_line 3 "$DS")
meas=$(echo "$line" | kv measured_ms) pred=$(echo "$line" | kv predicted_ms)
ends=$(for i in 0 1 2; do out_field "ar-$i" end; done | sort -n | tail -1)
first=$(ev_field register "${jobs[0]}" ts)
ksft_diag "array: measured makespan ${meas:-?} ms (jobs' own lines: $(ms_diff "${ends:-0}" "${first:-0}") ms), predicted ${pred:-?} ms"
ksft_check "... the log has the measured makespan (within 200 ms of the jobs' own lines) and the prediction" \
	sh -c "[ -n '$pred' ] && [ -n '$meas' ] && awk -v a='$meas' -v b='$(ms_diff "${ends:-0}" "${first:-0}")' 'BEGIN { d = a - b; exit !(d < 200 && d > -200) }'"
# three storage-bound jobs sharing one read of 48 MiB: the model's estimate, +-35% (start-up and
# Slurm's own delays are not in it; Documentation/results/slurm.md has the measured errors)
ksft_check "... predicted within 35% of measured" \
	awk -v p="${pred:-0}" -v m="${meas:-1}" 'BEGIN { d = (p - m) / m; exit !(d < 0.35 && d > -0.35) }'

# --- 6-9: online: a second job while the first is part-way ------------------
"$LS" drop "$STORE"
A=$(submit A "$DS")
wait_log "ev=release .*job=$A " 10
sleep 1.5
t_b=$(date +%s.%N)
Bj=$(submit B "$DS")
wait_log "ev=decide .*job=$Bj " 10
wait_jobs_gone "$A" "$Bj"
wait_log "ev=makespan ds=$DS n=2 " 5
dline=$(grep "ev=decide .*job=$Bj " "$LOG" | head -1)
read_a=$(echo "$dline" | kv read) t_dec=$(echo "$dline" | awk '{ print substr($1, 4) }')
el=$(ms_diff "$t_dec" "$(ev_field release "$A" ts)")
ksft_diag "B decided ${el} ms after A's release: $(echo "$dline" | cut -d' ' -f6-)"
ksft_check "online: B's decision sees A running (running=1)" sh -c "echo '$dline' | grep -q ' running=1 '"
# what A can have read by then: at most the cap for that long (+ 2 MiB of read-ahead), and
# the tracker must have counted a good part of it (A reads from its start, less its own start-up)
t_read() {
	awk -v r="${read_a:-0}" -v el="$el" -v cap=$CAP 'BEGIN { mx = cap * 1048576 * el / 1000 + 2097152
		exit !(r <= mx && r >= 0.4 * cap * 1048576 * (el - 500) / 1000) }'
}
ksft_check "... with A's bytes read from the tracker within what the store delivered (${read_a:-?} B in ${el} ms)" t_read
t_ab() { started_on_time "$A" A && started_on_time "$Bj" B; }
ksft_check "online: A and B started within ${TOL_MS} ms of their releases" t_ab
line=$(makespan_line 2 "$DS")
meas=$(echo "$line" | kv measured_ms) pred=$(echo "$line" | kv predicted_ms)
ksft_diag "online: $(echo "$line" | cut -d' ' -f3-)"
ksft_check "online: predicted and measured makespan in the log, within 35%" \
	awk -v p="${pred:-0}" -v m="${meas:-1}" 'BEGIN { d = (p - m) / m; exit !(d < 0.35 && d > -0.35) }'

# --- 10-13: a store that loses bandwidth: the model holds the second job ----
want=$("$T" -j model --profile "$tmp/profiles/ds2.json" --instances 2 | jq '[.best.delta_s[]] | max * 1000 | floor')
"$LS" drop "$STORE"
C=$(submit C "$DS2")
wait_log "ev=release .*job=$C " 10
Dj=$(submit D "$DS2")
wait_log "ev=hold .*job=$Dj " 10
st=$("$T" -j agent status --socket "$tmp/agent.sock")
t_status() {
	echo "$st" | jq -e --argjson j "$Dj" '.task_list[] | select(.job == $j) | .state == "held" and .reason == "auto" and .until_unix_s > 0 and .predicted_makespan_s > 0' >/dev/null
}
ksft_check "agent status -j: the held job, reason auto, its release time and predicted makespan" t_status
wait_jobs_gone "$C" "$Dj"
hold=$(ev_field release "$Dj" held_ms)
lag=$(( $(ms_diff "$(ev_field release "$Dj" ts)" "$(ev_field release "$C" ts)") ))
ksft_diag "B(2) = 0.3 B(1): offline best stagger ${want} ms; D released ${lag} ms after C (held ${hold} ms), reason $(ev_field release "$Dj" reason)"
ksft_check "... D held by the model for the offline model's stagger (+-300 ms)" \
	sh -c "[ '$(ev_field release "$Dj" reason)' = auto ] && [ ${want:-0} -gt 500 ] && awk -v a=$lag -v b=${want:-0} 'BEGIN { d = a - b; exit !(d < 300 && d > -300) }'"
ksft_check "... and started within ${TOL_MS} ms of its release" started_on_time "$Dj" D
ksft_check "... C and D COMPLETED in jobcomp" sh -c "[ '$(jobcomp "$C" JobState)$(jobcomp "$Dj" JobState)' = COMPLETEDCOMPLETED ]"

# --- 14-17: metrics; nothing left ------------------------------------------
"$T" stats --prometheus --textfile "$tmp/stats" >"$tmp/stats.out" 2>&1
t_stats() {
	promtool check metrics <"$tmp/stats/tandem_stats.prom" &&
		grep -q "^tandem_tracker_miss_bytes_total{.*job=\"slurm-${AR}_0.batch.0\"" "$tmp/stats/tandem_stats.prom"
}
ksft_check "stats --prometheus --textfile: promtool passes; the array task's tracker counters are there" t_stats
sleep 0.6
stop_agent
prom=$tmp/metrics/tandem_agent.prom
t_prom() {
	promtool check metrics <"$prom" && grep -q '^tandem_agent_predicted_makespan_seconds{.*group="last"' "$prom" &&
		grep -q '^tandem_tracker_shared_hit_bytes_total{' "$prom"
}
ksft_check "the agent's metrics file: promtool passes; predicted makespans and tracker counters" t_prom
ksft_check "no sanitizer report from the agent; it unloaded the tracker it loaded" \
	sh -c "! grep -q -E 'Sanitizer|runtime error' '$tmp/agent.err' && [ ! -e '$TANDEM_TRACKER_DIR' ]"
slurm_rig_stop "$tmp"
"$LS" down "$STORE" >/dev/null 2>&1
left=$(slurm_rig_leftovers "$tmp"; pgrep -u "$RIG_USER" -f "$tmp"; true)
ksft_diag "slurm_model.sh took ${SECONDS} s"
ksft_check "rig and store gone: no daemon, job process, mount or cgroup left" \
	sh -c "[ -z '$left' ] && ! mountpoint -q '$tmp/mnt' && [ ! -d /sys/fs/cgroup/blkio/tandem-loopstore-$STORE ]"
ksft_finish
