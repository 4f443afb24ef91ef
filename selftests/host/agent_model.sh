#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The agent's model policy without Slurm (slurm_model.sh has it with): a
# profile in --profile-dir is found by the dataset's path; the first task
# is released with the model's prediction, the second is held for the
# stagger the offline model (`tandemctl model`, the reference) gives on a
# store that loses bandwidth under concurrency, and re-decided as time
# passes; `tandemctl agent status` (text and -j) shows the decisions; a
# released task is a tracker job from before it reads (the bytes it read
# equal the dataset's size, counted by the tracker from the kernel's page
# cache events); the group's predicted and measured makespans are logged;
# SECONDS keeps its meaning with a prediction next to it; a dataset
# without a profile starts at once (auto's documented default); the
# tracker the agent loaded is gone after it. About 10 s.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
. "$top/selftests/lib/tracker-pins.sh"
B=${B:-build}
AGENT=${TANDEM_AGENT:-$top/$B/asan/tandem-agent}
T=$top/$B/tandemctl
PY=/usr/bin/python3
CLIENT="$PY $top/selftests/lib/agent_client.py"
NTESTS=12

ksft_plan $NTESTS
why=""
[ "$(id -u)" -eq 0 ] || why="needs root"
[ -z "$why" ] && { [ ! -x "$AGENT" ] || [ ! -x "$T" ]; } && why="no $AGENT or $T"
[ -z "$why" ] && [ ! -r /sys/kernel/btf/vmlinux ] && why="needs BTF for the tracker"
[ -z "$why" ] && ! command -v jq >/dev/null && why="needs jq"
if [ -n "$why" ]; then
	for i in $(seq $NTESTS); do ksft_skip "agent model $i" "$why"; done
	ksft_finish
fi
tmp=$(mktemp -d /var/tmp/tandem-agmodel-XXXXXX)
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-agmodel-$$
SOCK=$tmp/agent.sock LOG=$tmp/agent.log
agent_pid="" bg_pids=""
cleanup() {
	# shellcheck disable=SC2086
	[ -n "$bg_pids" ] && kill $bg_pids 2>/dev/null
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	tracker_pins_gone "$T"
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/profiles" "$tmp/metrics"
DS=$tmp/ds DS3=$tmp/ds3
"$T" loadgen gen "$DS" --files 32 --size 1M >/dev/null
"$T" loadgen gen "$DS3" --files 4 --size 64K >/dev/null
# the profile: measured here (B(k) of whatever /var/tmp is), then given a store
# that loses bandwidth with two readers: 50 MiB/s alone, 15 MiB/s together
"$T" calibrate --dataset "$DS" --sample 4M --rate 200M -o "$tmp/raw.json" >/dev/null 2>&1
jq '.storage.bandwidth_bps = [52428800, 15728640]' "$tmp/raw.json" >"$tmp/profiles/ds.json"
want=$("$T" -j model --profile "$tmp/profiles/ds.json" --instances 2 | jq '[.best.delta_s[]] | max * 1000 | floor')
solo=$("$T" -j model --profile "$tmp/profiles/ds.json" | jq '.best.makespan_s * 1000 | floor')

"$AGENT" --socket "$SOCK" --log "$LOG" --metrics-dir "$tmp/metrics" --profile-dir "$tmp/profiles" \
	--no-module --recheck 0.2 2>"$tmp/agent.err" &
agent_pid=$!
# up to 30 s: loading the tracker took 6-8 s on a loaded 2-vCPU host
for _ in $(seq 300); do grep -q "ev=node " "$LOG" 2>/dev/null && break; sleep 0.1; done
ksft_check "agent up, it loaded the tracker (ev=node tracker=loaded)" grep -q "ev=node tracker=loaded" "$LOG"

# a task: registers with its own pid, reads DS once DELAY s after its release, stays SECS
task() {	# JOB STAGGER SECS DIR [DELAY]
	$PY - "$SOCK" "$1" "$2" "$3" "$4" "${5:-0}" >"$tmp/$1.out" 2>&1 <<'EOF' &
import os, socket, sys, time
sock, job, stagger, secs, ds, delay = sys.argv[1:7]
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
s.sendall(f"REGISTER v=1 job={job} step=batch task=0 uid=0 pid={os.getpid()} "
          f"stagger={stagger} maxhold=60 dataset={ds}\n".encode())
buf = b""
while b"RELEASE" not in buf:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
print("%.3f" % time.time(), buf.decode().strip().replace("\n", " | "), flush=True)
time.sleep(float(delay))
n = 0
for f in sorted(os.listdir(ds)):
    with open(os.path.join(ds, f), "rb") as fh:
        while True:
            b = fh.read(1 << 16)
            if not b:
                break
            n += len(b)
print("read", n, flush=True)
time.sleep(float(secs))
EOF
	bg_pids="$bg_pids $!"
}
waitfor() {	# FILE REGEX [SECONDS]
	for _ in $(seq $((${3:-5} * 50))); do
		grep -q -E "$2" "$1" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}
kv() { tr ' ' '\n' | awk -v k="$1=" 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }'; }

# cold: our files only (never the machine's whole page cache)
cold() { $PY -c 'import os, sys
for d in sys.argv[1:]:
    for f in os.listdir(d):
        fd = os.open(os.path.join(d, f), os.O_RDONLY); os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$@"; }
cold "$DS"
# job 11 reads nothing until job 12 is decided: the offline model's t = 0
task 11 auto 3 "$DS" 0.6
waitfor "$LOG" "ev=release .*job=11 " 5
task 12 auto 1 "$DS"
waitfor "$LOG" "ev=hold .*job=12 " 5
sleep 0.3
"$T" agent status --socket "$SOCK" >"$tmp/st.txt"
"$T" -j agent status --socket "$SOCK" >"$tmp/st.json"
d1=$(grep "ev=decide .*job=11 " "$LOG" | head -1)
ksft_check "first task: released at once, a decision with the model's solo prediction ($solo ms)" \
	sh -c "grep -q 'ev=release .*job=11 .*reason=first' '$LOG' &&
	       awk -v p=$(echo "$d1" | kv pred_ms) -v s=${solo:-0} 'BEGIN { exit !(s > 0 && p - s < 0.1 * s && s - p < 0.1 * s) }'"
hold=$(grep "ev=hold .*job=12 " "$LOG" | head -1)
until=$(echo "$hold" | kv until)
# job 11 has read nothing when job 12 is decided: the online model's "now" is the offline t = 0
dec12=$(grep "ev=decide .*job=12 " "$LOG" | head -1 | awk '{ print substr($1, 4) }')
lag=$(awk -v u="$until" -v r="$dec12" 'BEGIN { printf "%d", (u - r) * 1000 }')
ksft_diag "offline best stagger $want ms; the agent holds job 12 until ${lag} ms after its decision: $(grep "ev=decide .*job=12 " "$LOG" | head -1 | cut -d' ' -f6-)"
ksft_check "second task: held (reason auto) for the offline model's stagger (+-150 ms)" \
	sh -c "echo '$hold' | grep -q 'reason=auto' && [ ${want:-0} -gt 300 ] && awk -v a=$lag -v b=${want:-0} 'BEGIN { d = a - b; exit !(d < 150 && d > -150) }'"
ksft_check "agent status: the held task with its reason and predicted makespan, the dataset's group" \
	sh -c "grep -q 'job 12 .*held .*reason auto, predicted makespan' '$tmp/st.txt' && grep -q \"$DS: held 1, running 1, group of 2\" '$tmp/st.txt'"
ksft_check "agent status -j: one document, job 12 held with until and predicted makespan" \
	sh -c "[ \$(jq -s length '$tmp/st.json') = 1 ] && jq -e '.task_list[] | select(.job == 12) | .state == \"held\" and .until_unix_s > 0 and .predicted_makespan_s > 0' '$tmp/st.json' >/dev/null &&
	       jq -e '.datasets[0].model == \"profile\"' '$tmp/st.json' >/dev/null"
waitfor "$tmp/12.out" RELEASE 5
r12=$(grep "ev=release .*job=12 " "$LOG" | awk '{ print substr($1, 4) }')
ksft_check "second task released at its decided time (+-100 ms of the last decision's release)" \
	sh -c "last=\$(grep 'ev=decide .*job=12 ' '$LOG' | tail -1); ts=\$(echo \"\$last\" | awk '{ print substr(\$1, 4) }');
	       rin=\$(echo \"\$last\" | tr ' ' '\n' | awk -F= '\$1 == \"release_in_ms\" { print \$2 }');
	       awk -v r=$r12 -v t=\$ts -v d=\$rin 'BEGIN { x = (r - t) * 1000 - d; exit !(x < 100 && x > -100) }'"
waitfor "$LOG" "ev=makespan ds=$DS n=2 " 8
mline=$(grep "ev=makespan ds=$DS n=2 " "$LOG" | tail -1)
ksft_diag "$(echo "$mline" | cut -d' ' -f3-)"
ksft_check "group end: measured and predicted makespan logged (model=profile)" \
	sh -c "echo '$mline' | grep -q 'measured_ms=[0-9]* predicted_ms=[0-9]* error=.* model=profile'"
# the tracker: job 11 read the whole dataset, counted from the kernel's events
"$T" -j stats >"$tmp/stats.json"
size=$((32 * 1048576))
got=$(jq '[.jobs[] | select(.name == "slurm-11.batch.0") | .datasets[] | .miss_bytes + .own_hit_bytes + .shared_hit_bytes] | add' "$tmp/stats.json")
first=$(jq '[.jobs[] | select(.name == "slurm-11.batch.0") | .datasets[] | .miss_bytes] | add' "$tmp/stats.json")
ksft_diag "tracker: job 11 missed $first B, accessed $got B of $size (it read $(awk '$1 == "read" { print $2 }' "$tmp/11.out") B)"
ksft_check "a released task is a tracker job from its first read: it loaded the dataset (misses = size +-5%)" \
	awk -v g="${first:-0}" -v s=$size 'BEGIN { exit !(g > 0.95 * s && g < 1.05 * s) }'
ksft_check "... and the agent logged what it read (ev=read, = size +-5%)" \
	sh -c "b=\$(grep 'ev=read .*job=11 ' '$LOG' | tr ' ' '\n' | awk -F= '\$1 == \"bytes\" { print \$2 }');
	       awk -v g=\${b:-0} -v s=$size 'BEGIN { exit !(g > 0.95 * s && g < 1.05 * s) }'"

# SECONDS keeps its meaning (with a prediction); no profile: auto starts at once
task 21 auto 2 "$DS"
waitfor "$LOG" "ev=release .*job=21 " 5
task 22 1.5 0 "$DS"
waitfor "$tmp/22.out" RELEASE 5
d22=$(grep "ev=decide .*job=22 " "$LOG" | head -1)
gap=$(awk -v a="$(grep "ev=release .*job=22 " "$LOG" | awk '{ print substr($1, 4) }')" \
	-v b="$(grep "ev=release .*job=21 " "$LOG" | awk '{ print substr($1, 4) }')" 'BEGIN { printf "%d", (a - b) * 1000 }')
ksft_diag "$(grep -E "job=2[12] " "$LOG" | grep -v -E "ev=(track|register)" | cut -d' ' -f2- | tr '\n' '|')"
ksft_check "stagger=1.5: released 1.5 s after the first (+-60 ms, reason stagger), a prediction logged (mode=seconds)" \
	sh -c "grep -q 'ev=release .*job=22 .*reason=stagger' '$LOG' && [ ${gap:-0} -ge 1440 ] && [ ${gap:-0} -le 1560 ] &&
	       echo '$d22' | grep -q 'mode=seconds model=profile .*pred_ms=[1-9]'"
task 31 auto 2 "$DS3"
waitfor "$LOG" "ev=release .*job=31 " 5
task 32 auto 0 "$DS3"
waitfor "$tmp/32.out" RELEASE 5
ksft_diag "$(grep -E "job=3[12] |ds=$DS3 " "$LOG" | cut -d' ' -f2- | tr '\n' '|')"
ksft_check "a dataset without a profile: auto starts at once (ev=profile file=none, reason auto)" \
	sh -c "grep -q \"ev=profile ds=$DS3 file=none\" '$LOG' && grep -q -E 'ev=release .*job=32 .*reason=auto held_ms=[0-9]+( |\$)' '$LOG'"
sleep 2.5
kill "$agent_pid"
wait "$agent_pid"
rc=$?
agent_pid=""
ksft_check "agent exits 0, no sanitizer report, the tracker it loaded is unloaded" \
	sh -c "[ $rc -eq 0 ] && ! grep -q -E 'Sanitizer|runtime error' '$tmp/agent.err' && [ ! -e '$TANDEM_TRACKER_DIR' ]"
ksft_finish
