# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# A real one-node Slurm for host tests: munged (as user munge, with its own key
# and socket), slurmctld and slurmd on non-default ports, all state, spool,
# logs and pid files under one folder. Nothing outside that folder is touched,
# so a system Slurm or munge (if any) is left alone.
#
# Sourced:  . slurm-rig.sh; slurm_rig_start DIR [PLUGSTACK]; ...; slurm_rig_stop DIR
# Command:  bash slurm-rig.sh start DIR [PLUGSTACK] | stop DIR | installed
#
# slurm_rig_start exports SLURM_CONF (srun, sbatch, squeue, scancel read it)
# and RIG_NODE, RIG_JOBCOMP, RIG_SLURMD_LOG. Ports: RIG_CTLD_PORT (16817),
# RIG_SLURMD_PORT (16818); one rig at a time per machine (a lock on
# /run/lock/tandem-slurm-rig.lock, held by the shell that started it, waited
# for up to RIG_LOCK_WAIT seconds). slurm_rig_stop kills the daemons, waits
# for their pids (so the ports are free for the next start) and is safe to
# call twice. slurm_rig_leftovers DIR prints the pids of anything of the rig
# still alive. RIG_USER (nobody) is the unprivileged user jobs run as.

RIG_CTLD_PORT=${RIG_CTLD_PORT:-16817}
RIG_SLURMD_PORT=${RIG_SLURMD_PORT:-16818}
RIG_NODE=tandem-rig
RIG_USER=${RIG_USER:-nobody}
RIG_LOCK=${RIG_LOCK:-/run/lock/tandem-slurm-rig.lock}
RIG_LOCK_WAIT=${RIG_LOCK_WAIT:-300}

# slurm_rig_installed: 0 when every binary the rig needs is present
slurm_rig_installed() {
	local b
	for b in munged slurmctld slurmd sbatch srun squeue scancel scontrol; do
		command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || return 1
	done
	id munge >/dev/null 2>&1
}

_rig_conf() {
	local dir=$1 plugstack=$2 host=$3
	cat <<EOF
# one-node Slurm written by selftests/lib/slurm-rig.sh
ClusterName=tandemrig
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$RIG_CTLD_PORT
SlurmdPort=$RIG_SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/ctld-state
SlurmdSpoolDir=$dir/slurmd-spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0,sched_min_interval=100000
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
PlugStackConfig=$plugstack
ReturnToService=2
KillWait=2
MinJobAge=300
InactiveLimit=0
MessageTimeout=10
SlurmdParameters=config_overrides
NodeName=$RIG_NODE NodeHostname=$host NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=rig Nodes=$RIG_NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
}

# _rig_wait_pidfile FILE SECONDS: the daemon wrote its pid
_rig_wait_pidfile() {
	local i
	for i in $(seq $(($2 * 10))); do
		[ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

_rig_start_munge() {
	local dir=$1
	mkdir -p "$dir/munge"
	dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
	chown -R munge: "$dir/munge"
	chmod 700 "$dir/munge"
	chmod 400 "$dir/munge/munge.key"
	# the socket folder must be reachable by every client (users run sbatch)
	chmod 755 "$dir/munge"
	runuser -u munge -- munged --force --socket="$dir/munge/munge.socket" \
		--key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
		--log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" ||
		return 1
	_rig_wait_pidfile "$dir/munge/munged.pid" 10
}

# slurm_rig_start DIR [PLUGSTACK]: DIR must exist and be empty or a previous rig
slurm_rig_start() {
	local dir=$1 plugstack=${2:-} host i
	host=$(hostname -s)
	mkdir -p "$(dirname "$RIG_LOCK")"
	exec {RIG_LOCK_FD}>>"$RIG_LOCK"
	flock -w "$RIG_LOCK_WAIT" "$RIG_LOCK_FD" || {
		echo "rig: another Slurm rig holds $RIG_LOCK" >&2
		return 1
	}
	_rig_stop_daemons "$dir" 2>/dev/null
	rm -rf "${dir:?}/munge" "$dir/ctld-state" "$dir/slurmd-spool"
	mkdir -p "$dir/ctld-state" "$dir/slurmd-spool"
	chmod 755 "$dir"
	if [ -z "$plugstack" ]; then
		plugstack=$dir/plugstack.conf
		: >"$plugstack"
	fi
	_rig_conf "$dir" "$plugstack" "$host" >"$dir/slurm.conf"
	chmod 644 "$dir/slurm.conf"
	export SLURM_CONF=$dir/slurm.conf
	RIG_JOBCOMP=$dir/jobcomp.txt
	RIG_SLURMD_LOG=$dir/slurmd.log
	_rig_start_munge "$dir" || { echo "rig: munged did not start" >&2; return 1; }
	slurmctld -i -f "$SLURM_CONF" || return 1
	_rig_wait_pidfile "$dir/slurmctld.pid" 20 || { echo "rig: slurmctld did not start" >&2; return 1; }
	slurmd -N "$RIG_NODE" -f "$SLURM_CONF" || return 1
	_rig_wait_pidfile "$dir/slurmd.pid" 20 || { echo "rig: slurmd did not start" >&2; return 1; }
	for i in $(seq 100); do
		sinfo -h -N -o '%T' 2>/dev/null | grep -q -E '^(idle|mixed|allocated)' && return 0
		sleep 0.2
	done
	echo "rig: node $RIG_NODE not idle after 20 s: $(sinfo -h -N -o '%T %E' 2>&1)" >&2
	return 1
}

_rig_any_alive() {
	local p
	for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done
	return 1
}

# _rig_kill PIDFILE...: SIGTERM to all, wait up to 10 s, then SIGKILL and wait
_rig_kill() {
	local f pid pids="" i
	for f in "$@"; do
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		rm -f "$f"
		# a stale file after a crash may name a reused pid: check it is ours
		case "$(cat "/proc/$pid/comm" 2>/dev/null)" in
		slurmctld | slurmd | munged) pids="$pids $pid" ;;
		esac
	done
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	for i in $(seq 100); do
		_rig_any_alive $pids || return 0
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null
	for pid in $pids; do
		while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	done
}

# _rig_procs DIR [all]: slurmstepd and job processes of this rig (their
# environment names its slurm.conf; job processes also carry SLURM_JOB_ID);
# with "all" its daemons too
_rig_procs() {
	local pid env comm
	for env in /proc/[0-9]*/environ; do
		pid=${env#/proc/}
		pid=${pid%/environ}
		tr '\0' '\n' 2>/dev/null <"$env" | grep -q -x -F "SLURM_CONF=$1/slurm.conf" || continue
		comm=$(cat "/proc/$pid/comm" 2>/dev/null)
		if [ "$comm" = slurmstepd ] || tr '\0' '\n' 2>/dev/null <"$env" | grep -q '^SLURM_JOB_ID=' ||
			{ [ "${2:-}" = all ] && case $comm in slurmctld | slurmd | munged) true ;; *) false ;; esac; }; then
			echo "$pid"
		fi
	done
}

slurm_rig_leftovers() { _rig_procs "$1" all; }

# slurm_rig_stop DIR: cancel what is left, stop the daemons, then any step or
# job process that outlived them; give the machine's rig lock back
slurm_rig_stop() {
	_rig_stop_daemons "$1"
	if [ -n "${RIG_LOCK_FD:-}" ]; then
		exec {RIG_LOCK_FD}>&-
		RIG_LOCK_FD=""
	fi
}

_rig_stop_daemons() {
	local dir=$1 i left
	[ -n "$dir" ] && [ -d "$dir" ] || return 0
	if [ -s "$dir/slurmctld.pid" ] && [ -f "$dir/slurm.conf" ]; then
		export SLURM_CONF=$dir/slurm.conf
		for i in $(timeout 5 squeue -h -o %A 2>/dev/null); do
			timeout 5 scancel "$i" 2>/dev/null
		done
		for i in $(seq 50); do
			[ -z "$(timeout 5 squeue -h -o %A 2>/dev/null)" ] && break
			sleep 0.2
		done
	fi
	_rig_kill "$dir/slurmd.pid" "$dir/slurmctld.pid"
	for i in 1 2 3; do
		left=$(_rig_procs "$dir")
		[ -n "$left" ] || break
		# shellcheck disable=SC2086
		kill -KILL $left 2>/dev/null
		sleep 0.2
	done
	_rig_kill "$dir/munge/munged.pid"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case "${1:-}" in
	start) slurm_rig_start "$2" "${3:-}" ;;
	stop) slurm_rig_stop "$2" ;;
	installed) slurm_rig_installed ;;
	*) echo "usage: $0 start DIR [PLUGSTACK] | stop DIR | installed" >&2; exit 2 ;;
	esac
fi
