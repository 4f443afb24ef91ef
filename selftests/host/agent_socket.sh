#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tandem-agent's socket without Slurm: a Python client (selftests/lib/
# agent_client.py, written apart from agent/proto.c) registers, is held and
# released at the policy's times, by PROGRESS, by a root RELEASE, cancelled,
# leaves; who may send what (SO_PEERCRED: root, the job's owner, another
# user); limits (connections, the request timeout, --max-hold); SHUTDOWN
# releases what is held; a second agent on the same socket refuses to start;
# the metrics file against promtool and the Python client's parser; a scratch
# space's families (size, use, pending, drained, last durable time) against
# tandemctl scratch show and drained.log, before and after its drainer is
# killed with a file pending. ~15 s.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
B=${B:-build}
# the agent under ASan/UBSan: a memory error or leak fails its exit status and agent.err
AGENT=${TANDEM_AGENT:-$top/$B/asan/tandem-agent}
PY=/usr/bin/python3
CLIENT="$PY $top/selftests/lib/agent_client.py"
OWNER=nobody OTHER=daemon
T=${TANDEMCTL:-$top/$B/tandemctl}
NTESTS=28

ksft_plan $NTESTS
why=""
[ "$(id -u)" -eq 0 ] || why="needs root (SO_PEERCRED uid 0 registers)"
[ -z "$why" ] && [ ! -x "$AGENT" ] && why="no $AGENT"
[ -z "$why" ] && { [ ! -x "$T" ] || ! command -v jq >/dev/null; } && why="no $T or no jq"
[ -z "$why" ] && ! id "$OWNER" >/dev/null 2>&1 && why="no user $OWNER"
[ -z "$why" ] && ! id "$OTHER" >/dev/null 2>&1 && why="no user $OTHER"
if [ -n "$why" ]; then
	for i in $(seq $NTESTS); do ksft_skip "agent socket $i" "$why"; done
	ksft_finish
fi
uid_owner=$(id -u "$OWNER")
tmp=$(mktemp -d /tmp/tandem-agent-XXXXXX)
chmod 755 "$tmp"
mkdir -p "$tmp/ds" "$tmp/run" "$tmp/metrics"
SOCK=$tmp/run/agent.sock
LOG=$tmp/agent.log
agent_pid=""
bg_pids=""
# the scratch spaces the agent reports: only this test's
export TANDEM_SCRATCH_DIR=$tmp/scratch TANDEM_SCRATCH_RECORD_DIR=$tmp/scratch-record
cleanup() {
	local pid
	# shellcheck disable=SC2086
	[ -n "$bg_pids" ] && kill $bg_pids 2>/dev/null
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	pid=$(cat "$TANDEM_SCRATCH_DIR/am/drainer.pid" 2>/dev/null)
	[ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = tandem-drain ] && kill -9 "$pid"
	mountpoint -q "$TANDEM_SCRATCH_DIR/am/mnt" && umount "$TANDEM_SCRATCH_DIR/am/mnt"
	rm -rf "$tmp"
}
trap cleanup EXIT

# the protocol alone: no tracker, no profiles (agent_model.sh has those)
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-agent-$$
start_agent() {	# [options]
	"$AGENT" --socket "$SOCK" --log "$LOG" --metrics-dir "$tmp/metrics" --no-tracker \
		--profile-dir "$tmp/no-profiles" "$@" 2>>"$tmp/agent.err" &
	agent_pid=$!
	for _ in $(seq 300); do	# up to 30 s: a slow or loaded host
		grep -q "ev=start.*pid=$agent_pid" "$LOG" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
stop_agent() { kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null; agent_pid=""; }
as() { local u=$1; shift; runuser -u "$u" -- $CLIENT "$SOCK" "$@"; }
# reg JOB STAGGER [extra fields]: a REGISTER line for this client's own pid
reg() { echo "REGISTER v=1 job=$1 step=batch task=0 uid=$uid_owner pid={pid} stagger=$2 maxhold=${3:-600} dataset=$tmp/ds\n"; }
# held JOB STAGGER [LINGER]: a task in the background, its replies in $tmp/JOB.out
held() {
	$CLIENT "$SOCK" "$(reg "$1" "$2")" --lines 2 --timeout 30 --linger "${3:-0}" >"$tmp/$1.out" 2>&1 &
	bg_pids="$bg_pids $!"
	for _ in $(seq 100); do
		grep -q "ev=\(hold\|release\) .*job=$1 " "$LOG" && return 0
		sleep 0.02
	done
}
waitfor() {	# FILE REGEX [SECONDS]
	for _ in $(seq $((${3:-5} * 50))); do
		grep -q -E "$2" "$1" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", (a - b) * 1000 }'; }
within() { awk -v d="$1" -v t="$2" 'BEGIN { exit !(d <= t && d >= -t) }'; }
field() { tr ' ' '\n' | awk -v k="$1=" 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }'; }

start_agent --max-conns 8 || { ksft_diag "agent did not start: $(cat "$tmp/agent.err")"; }

# 1: the socket's mode lets anyone connect; SO_PEERCRED decides
ksft_expect_eq "socket mode 666 (anyone may ask STATUS)" "$(stat -c %a "$SOCK")" 666

# 2-4: first starts now; the second is held 1.2 s after it and pushed on time
held 101 1.2 8
held 102 1.2 8
waitfor "$tmp/102.out" RELEASE 5
r1=$(awk '/RELEASE/ { print $1 }' "$tmp/101.out")
h2=$(grep HOLD "$tmp/102.out")
r2=$(awk '/RELEASE/ { print $1 }' "$tmp/102.out")
until2=$(echo "$h2" | field until)
ksft_check "first task: RELEASE reason=first at once" grep -q 'RELEASE id=[0-9]* reason=first' "$tmp/101.out"
ksft_check "second: HOLD until = first release + 1200 ms (+-50)" \
	awk -v u="$until2" -v r="$r1" 'BEGIN { d = u - r * 1000 - 1200; exit !(d < 50 && d > -50) }'
ksft_check "second: RELEASE reason=stagger pushed within 50 ms of until" \
	sh -c "grep -q 'RELEASE id=[0-9]* reason=stagger' '$tmp/102.out' && awk -v a=$r2 -v u=$until2 'BEGIN { d = a * 1000 - u; exit !(d < 50 && d > -50) }'"

# 5-7: progress:0.5 behind job 101 (owned by $OWNER): held until it reports 0.5
held 103 progress:0.5
ksft_check "progress:0.5: HOLD until=0 (waits for an event)" grep -q 'HOLD id=[0-9]* until=0 reason=progress' "$tmp/103.out"
r=$(as "$OTHER" 'PROGRESS v=1 job=101 frac=0.9\n')
ksft_check "PROGRESS from another user: ERR code=perm" sh -c "echo '$r' | grep -q 'ERR code=perm'"
as "$OWNER" 'PROGRESS v=1 job=101 frac=0.3\n' >/dev/null
as "$OWNER" 'PROGRESS v=1 job=102 frac=0.3\n' >/dev/null
sleep 0.2
still=$(grep -c RELEASE "$tmp/103.out")
as "$OWNER" 'PROGRESS v=1 job=101 frac=0.5\n' >/dev/null
as "$OWNER" 'PROGRESS v=1 job=102 frac=0.6\n' >"$tmp/p.out"
waitfor "$tmp/103.out" RELEASE 3
ksft_check "owner's PROGRESS 0.3: still held; 0.5 on both: RELEASE reason=progress" \
	sh -c "[ $still -eq 0 ] && grep -q 'OK n=1' '$tmp/p.out' && grep -q 'RELEASE id=[0-9]* reason=progress' '$tmp/103.out'"

# 8-11: root RELEASE and CANCEL; a held client that leaves; DONE
held 104 30
held 105 30
r=$(as "$OWNER" 'RELEASE v=1 job=104\n')
ok=$(echo "$r" | grep -c 'ERR code=perm')
r=$($CLIENT "$SOCK" 'RELEASE v=1 job=104\n')
waitfor "$tmp/104.out" RELEASE 2
ksft_check "RELEASE job=104: refused to the owner, done for root (OK n=1, reason=control pushed)" \
	sh -c "[ $ok -eq 1 ] && echo '$r' | grep -q 'OK n=1' && grep -q 'RELEASE id=[0-9]* reason=control' '$tmp/104.out'"
r=$($CLIENT "$SOCK" 'CANCEL v=1 job=105\n')
waitfor "$tmp/105.out" CANCEL 2
ksft_check "CANCEL job=105 by root: CANCEL reason=control pushed, the task forgotten" \
	sh -c "echo '$r' | grep -q 'OK n=1' && grep -q 'CANCEL id=[0-9]* reason=control' '$tmp/105.out' &&
		! $CLIENT '$SOCK' 'STATUS v=1\n' | grep -q 'job=105 '"
$CLIENT "$SOCK" "$(reg 106 30)" --lines 1 >"$tmp/106.out"
waitfor "$LOG" 'ev=left .*job=106 ' 2
ksft_check "a held client that closes its connection: the agent logs ev=left, forgets it" \
	sh -c "grep -q HOLD '$tmp/106.out' && ! $CLIENT '$SOCK' 'STATUS v=1\n' | grep -q 'job=106 '"
r=$($CLIENT "$SOCK" 'DONE v=1 job=101 step=batch task=0 status=256\n')
r2=$($CLIENT "$SOCK" 'DONE v=1 job=999 step=batch task=0 status=0\n')
ksft_check "DONE: OK n=1 for a running task (exit status logged), OK n=0 for an unknown one" \
	sh -c "echo '$r' | grep -q 'OK n=1' && echo '$r2' | grep -q 'OK n=0' && grep -q 'ev=exit .*job=101 .*status=256' '$LOG'"

# 12-13: REGISTER checks: root only, the pid must be the caller's
r=$(as "$OWNER" "$(reg 107 0)")
r2=$($CLIENT "$SOCK" "REGISTER v=1 job=107 step=batch task=0 uid=0 pid=1 stagger=0 maxhold=1 dataset=/\n")
ksft_check "REGISTER from a user: ERR code=perm" sh -c "echo '$r' | grep -q 'ERR code=perm'"
ksft_check "REGISTER naming another pid: ERR code=arg 'not the caller'" \
	sh -c "echo '$r2' | grep -q 'ERR code=arg msg=pid%3D1%20is%20not%20the%20caller'"

# 14-15: limits: the connection cap answers busy; a silent client times out
held 201 0 20
for j in 202 203 204 205 206 207 208; do held $j 30; done
t0=$(date +%s.%N)
$CLIENT "$SOCK" '' --timeout 5 >"$tmp/silent.out" &
bg_pids="$bg_pids $!"
sleep 0.2
r=$($CLIENT "$SOCK" 'STATUS v=1\n')
ksft_check "7 held + 1 silent + this one > --max-conns 8: ERR code=busy" sh -c "echo '$r' | grep -q 'ERR code=busy'"
waitfor "$tmp/silent.out" 'EOF|TIMEOUT' 4
t1=$(awk '/ERR/ { print $1 }' "$tmp/silent.out")
ksft_check "a client that sends nothing: ERR code=timeout after 2 s" \
	sh -c "grep -q 'ERR code=timeout' '$tmp/silent.out' && awk -v a=${t1:-0} -v b=$t0 'BEGIN { exit !(a - b > 1.8 && a - b < 3) }'"

# 16-17: SHUTDOWN: refused to a user; root's releases everything held and exits
r=$(as "$OWNER" 'SHUTDOWN v=1\n')
$CLIENT "$SOCK" 'SHUTDOWN v=1\n' >"$tmp/shut.out"
for _ in $(seq 100); do kill -0 "$agent_pid" 2>/dev/null || break; sleep 0.05; done
n=$(grep -l 'RELEASE id=[0-9]* reason=shutdown' "$tmp"/20?.out 2>/dev/null | wc -l)
wait "$agent_pid"
rc=$?
agent_pid=""
ksft_check "SHUTDOWN: perm for a user; for root all 7 held released (reason=shutdown), exit 0" \
	sh -c "echo '$r' | grep -q 'ERR code=perm' && [ $n -eq 7 ] && [ $rc -eq 0 ]"
ksft_check "... and the socket file is removed" [ ! -e "$SOCK" ]

# 18: --max-hold caps every hold
start_agent --max-hold 1
held 301 0 5
held 302 30
waitfor "$tmp/302.out" RELEASE 4
h=$(grep -o 'held_ms=[0-9]*' "$LOG" | tail -1 | cut -d= -f2)
ksft_check "--max-hold 1: a stagger of 30 s is released after 1 s, reason=maxhold" \
	sh -c "grep -q 'RELEASE id=[0-9]* reason=maxhold' '$tmp/302.out' && [ ${h:-0} -ge 950 ] && [ ${h:-0} -le 1100 ]"

# 19: a second agent on the same socket refuses to start
"$AGENT" --socket "$SOCK" 2>"$tmp/second.err"
rc=$?
ksft_check "a second agent on the socket: exit 1, 'another agent is listening there'" \
	sh -c "[ $rc -eq 1 ] && grep -q 'another agent is listening there' '$tmp/second.err' && [ -S '$SOCK' ]"

# 20: the metrics file: promtool's lint, and the Python parser's values
sleep 0.6
stop_agent
prom=$tmp/metrics/tandem_agent.prom
parsed=$($PY - "$prom" <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families
v = {}
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        v.setdefault(s.name, 0)
        v[s.name] += s.value
print(int(v.get("tandem_agent_registrations_total", -1)), int(v.get("tandem_agent_releases_total", -1)))
EOF
)
ksft_diag "parsed: registrations releases = $parsed; promtool: $(promtool check metrics <"$prom" 2>&1 | head -3)"
ksft_check "metrics: promtool check metrics passes; registrations 2, releases 2 (first, maxhold)" \
	sh -c "promtool check metrics <'$prom' && [ '$parsed' = '2 2' ]"
# 22-24: a user's flood of connections cannot crowd out the plugin (root) or another user
start_agent --max-conns 64 --max-user-conns 3
runuser -u "$OTHER" -- $PY - "$SOCK" 100 1.8 >"$tmp/flood.out" 2>&1 <<'EOF' &
import socket, sys, time
path, n, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)          # and sends nothing: each one an open connection
    socks.append(s)
time.sleep(0.5)
busy = still = 0
for s in socks:
    s.setblocking(False)
    try:
        got = s.recv(4096)
    except BlockingIOError:
        still += 1
        continue
    busy += b"ERR code=busy" in got
print("busy=%d open=%d" % (busy, still), flush=True)
time.sleep(hold)
EOF
flood_pid=$!
bg_pids="$bg_pids $flood_pid"
sleep 0.3
$CLIENT "$SOCK" "$(reg 401 0)" --lines 1 --timeout 2 >"$tmp/401.out"
r=$(as "$OWNER" 'STATUS v=1\n')
wait "$flood_pid"
ksft_diag "flood of 100 by $OTHER: $(cat "$tmp/flood.out"); $(grep -c "code=busy .*uid $(id -u "$OTHER") has" "$LOG") refusals logged"
ksft_check "a user's 100 silent connections: 3 stay open (--max-user-conns 3), 97 get ERR code=busy" \
	grep -q '^busy=97 open=3$' "$tmp/flood.out"
ksft_check "... meanwhile root's REGISTER (the plugin) is answered: RELEASE reason=first" \
	grep -q 'RELEASE id=[0-9]* reason=first' "$tmp/401.out"
ksft_check "... and another user's STATUS is answered (OK n=1)" sh -c "echo '$r' | grep -q 'OK n=1'"

# 24-27: a scratch space in the agent's metrics (written every 2 s while one exists)
prom=$tmp/metrics/tandem_agent.prom
# pm FAMILY: the value of scratch am's sample in the metrics file, empty if none
pm() { awk -v f="$1" 'index($0, f "{") == 1 && index($0, "scratch=\"am\"") { print $2 }' "$prom"; }
mkdir -p "$tmp/drain"
"$T" scratch create am --node 0 --size 16M --drain-to "$tmp/drain" >/dev/null 2>"$tmp/scratch.err"
ksft_diag "scratch create: $(cat "$tmp/scratch.err")"
head -c 1048593 /dev/urandom >"$TANDEM_SCRATCH_DIR/am/mnt/ckpt1"
waitfor "$prom" '^tandem_scratch_drained_files_total\{.*scratch="am".*\} 1$' 10
first=$(awk '{ print $1; exit }' "$TANDEM_SCRATCH_DIR/am/drained.log" 2>/dev/null)
got="$(pm tandem_scratch_size_bytes) $(pm tandem_scratch_pending_bytes) $(pm tandem_scratch_pending_files)"
got="$got $(pm tandem_scratch_drained_files_total) $(pm tandem_scratch_drainer_running)"
ksft_diag "scratch am: size pending_bytes pending_files drained running = $got; used $(pm tandem_scratch_used_bytes); last durable $(pm tandem_scratch_last_durable_timestamp_seconds), drained.log $first"
ksft_expect_eq "metrics, a file drained: size 16 MiB, 0 pending bytes and files, 1 drained, drainer up" \
	"$got" "16777216 0 0 1 1"
ksft_check "... used >= the file's 1048593 bytes; last durable time = drained.log's (+-1 ms)" \
	awk -v u="$(pm tandem_scratch_used_bytes)" -v a="$(pm tandem_scratch_last_durable_timestamp_seconds)" \
	-v b="${first:-x}" 'BEGIN { d = a - b; exit !(u >= 1048593 && b > 0 && d < 0.001 && d > -0.001) }'
# the drainer killed: a new file stays pending, and the metrics say so
kill -9 "$(cat "$TANDEM_SCRATCH_DIR/am/drainer.pid")"
sleep 0.2
head -c 300000 /dev/urandom >"$TANDEM_SCRATCH_DIR/am/mnt/ckpt2"
waitfor "$prom" '^tandem_scratch_pending_bytes\{.*scratch="am".*\} 300000$' 10
got="$(pm tandem_scratch_pending_bytes) $(pm tandem_scratch_pending_files)"
got="$got $(pm tandem_scratch_drained_files_total) $(pm tandem_scratch_drainer_running)"
show=$("$T" -j scratch show am | jq -r '"\(.pending_bytes) \(.pending_files)"')
ksft_diag "after kill -9 of the drainer: pending_bytes pending_files drained running = $got; show: $show"
ksft_expect_eq "metrics, drainer killed, a 300000-byte file written: 300000 bytes, 1 file pending, 1 drained, drainer down" \
	"$got" "300000 1 1 0"
ksft_check "... promtool check metrics passes, and show says the same pending bytes and files" \
	sh -c "promtool check metrics <'$prom' && [ '$show' = '300000 1' ]"
"$T" scratch del --force am >/dev/null 2>&1
stop_agent

ksft_check "no sanitizer report from the agent (ASan, LSan, UBSan)" \
	sh -c "! grep -q -E 'Sanitizer|runtime error' '$tmp/agent.err'"
ksft_finish
