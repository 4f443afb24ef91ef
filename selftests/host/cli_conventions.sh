#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tandemctl's conventions (Documentation/tandemctl.md), for every object and
# verb that `tandemctl --help` lists: --help on stdout with exit 0; an
# unknown option, and a global option after the object, refused on stderr
# with exit 2, naming the option; an unknown verb refused with exit 2. Then
# for the verbs that run on this host (no tandem.ko: those are in the VM's
# 30-tandemctl.sh): success prints at least one line of text, and with -j
# exactly one JSON document (jq), -p being JSON too.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
if [ ! -x "$T" ] || ! command -v jq >/dev/null; then
	ksft_plan 1
	ksft_skip "conventions" "needs $T and jq"
	ksft_finish
fi
tmp=$(mktemp -d /tmp/tandem-cli-XXXXXX)
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-cli-$$
# the default directory's tracker, when the check below loaded it (killed
# midway, it would stay loaded): unloaded on the way out, signals included
default_loaded=
trap '"$T" tracker unload >/dev/null 2>&1
      [ -n "$default_loaded" ] && env -u TANDEM_TRACKER_DIR "$T" tracker unload >/dev/null 2>&1
      rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

# "OBJECT [VERB]" of every command: a verb is a lowercase word after the object
"$T" --help >"$tmp/help" 2>"$tmp/help.err"
cmds=$(sed -n 's/^  tandemctl \([a-z]*\)\( [a-z][a-z]*\)\?\( .*\)\?$/\1\2/p' "$tmp/help")
ncmds=$(echo "$cmds" | grep -c .)
runnable=14
# the objects of those commands (an object with verbs has help of its own)
objs=$(echo "$cmds" | awk '{ print $1 }' | sort -u)
nobjs=$(echo "$objs" | grep -c .)
ksft_plan $((2 + ncmds * 3 + nobjs * 2 + 6 + runnable * 2 + 3))

ksft_check "tandemctl --help: stdout, exit 0, nothing on stderr" \
	test -s "$tmp/help" -a ! -s "$tmp/help.err"
ksft_check "the listing has every object (at least 25 commands, run, dataset add, predict graph)" \
	sh -c "[ $ncmds -ge 25 ] && echo '$cmds' | grep -qx run && echo '$cmds' | grep -qx 'dataset add' &&
	       echo '$cmds' | grep -qx 'predict graph'"

# call NAME EXPECT_RC WHERE WANT CMD...: exit status, and WANT (a fixed string)
# on stdout or stderr (WHERE), the other stream empty
call() {
	local name=$1 rc=$2 where=$3 want=$4 st
	shift 4
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
	local on=$tmp/$where other=$tmp/err
	[ "$where" = err ] && other=$tmp/out
	if [ $st -eq "$rc" ] && grep -qF -- "$want" "$on" && [ ! -s "$other" ]; then
		ksft_pass "$name"
	else
		ksft_diag "exit $st (want $rc); stdout: $(head -c 300 "$tmp/out"); stderr: $(head -c 300 "$tmp/err")"
		ksft_fail "$name"
	fi
}

while read -r obj verb; do
	# shellcheck disable=SC2086
	call "$obj $verb --help: usage on stdout, exit 0" 0 out "tandemctl $obj${verb:+ $verb}" \
		"$T" $obj $verb --help
	# shellcheck disable=SC2086
	call "$obj $verb --no-such-option: stderr names it, exit 2" 2 err "'--no-such-option'" \
		"$T" $obj $verb --no-such-option -- true
	# shellcheck disable=SC2086
	call "$obj $verb -j (a global option after the object): refused, exit 2" 2 err \
		"option '-j' goes before the object" "$T" $obj $verb -j -- true
done <<<"$cmds"

# OBJECT --help and OBJECT -h: every command of the object, on stdout, exit 0
while read -r obj; do
	first=$(echo "$cmds" | awk -v o="$obj" '$1 == o { print; exit }')
	for h in --help -h; do
		call "$obj $h: the object's usage on stdout, exit 0" 0 out "tandemctl $first" "$T" "$obj" $h
	done
done <<<"$objs"

call "unknown verb: exit 2" 2 err "unknown verb 'frob'" "$T" dataset frob
call "unknown object: exit 2" 2 err "unknown object 'frob'" "$T" frob
call "OBJECT help: usage on stdout" 0 out "tandemctl tracker load" "$T" tracker help
# the predict verbs refuse each other's options
call "predict train --batch: not train's, exit 2" 2 err "unknown option '--batch'" \
	"$T" predict train --batch 4 --data x --out y
call "predict --data: not predict's, exit 2" 2 err "unknown option '--data'" \
	"$T" predict x.onnx --batch 4 --data x
call "predict eval --out: not eval's, exit 2" 2 err "unknown option '--out'" \
	"$T" predict eval --data x --out y

# A verb that runs here prints something in text, and one JSON document with -j.
ds=$tmp/ds
"$T" loadgen gen "$ds" --files 4 --size 64K >/dev/null
"$T" calibrate --dataset "$ds" --sample 0 --rate 100M,100M -o "$tmp/prof.json" >/dev/null 2>&1
D=$top/predictor/data
tracker_ok=$([ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] && echo yes)
# success NAME NEEDS ARGS...: tandemctl ARGS, then tandemctl -j ARGS
success() {
	local name=$1 needs=$2 n
	shift 2
	if [ "$needs" = tracker ] && [ -z "$tracker_ok" ]; then
		ksft_skip "$name: text" "needs root and BTF"
		ksft_skip "$name: -j" "needs root and BTF"
		return
	fi
	"$T" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	ksft_check "$name: exit 0 and a line of text" test $? -eq 0 -a -s "$tmp/out"
	# the state the verb changed back, for -j
	case $name in
	"tracker load") "$T" tracker unload >/dev/null 2>&1 ;;
	"tracker unload") "$T" tracker load >/dev/null 2>&1 ;;
	esac
	"$T" -j "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	n=$(jq -s length "$tmp/out" 2>/dev/null)
	[ "$n" = 1 ] || ksft_diag "$name -j: $n documents: $(head -c 300 "$tmp/out")"
	ksft_expect_eq "$name -j: exactly one JSON document" "$n" 1
}
success "status" - status
success "loadgen gen" - loadgen gen "$tmp/g" --files 2 --size 4K
success "loadgen" - loadgen "$ds"
success "loadgen order" - loadgen order "$ds" --seed 1,2
success "calibrate" - calibrate --dataset "$ds" --sample 0 --rate 100M -o "$tmp/p2.json"
success "model" - model --profile "$tmp/prof.json"
success "run" - run --dataset "$ds" --profile "$tmp/prof.json" --no-track -- true ::: true
success "predict" - predict "$D/onnx/resnet18.onnx" --batch 4
success "predict graph" - predict graph "$D/onnx/resnet18.onnx"
TANDEM_SCRATCH_DIR=$tmp/scratch TANDEM_SCRATCH_RECORD_DIR=$tmp/scratch-record success "scratch list" - scratch list
success "tracker load" tracker tracker load
success "tracker dataset" tracker tracker dataset cli "$ds"
success "tracker status" tracker tracker status
success "tracker unload" tracker tracker unload

out=$("$T" -p status)
ksft_check "-p alone: indented JSON" sh -c "echo '$out' | jq -e . >/dev/null && [ \$(echo '$out' | wc -l) -gt 1 ]"
"$T" -j run --dataset "$ds" --profile "$tmp/prof.json" --no-track --report "$tmp/r.json" -- \
	true ::: true >"$tmp/j.json" 2>/dev/null
ksft_check "run: --report FILE is the document -j prints" \
	sh -c "[ \"\$(jq -S . '$tmp/j.json')\" = \"\$(jq -S . '$tmp/r.json')\" ]"
# the default pin directory: unload takes load's /sys/fs/bpf/tandem with it
# (only when nothing of it was there before: a user's tracker is left alone)
if [ -e /sys/fs/bpf/tandem ] || [ "$(id -u)" != 0 ]; then
	ksft_skip "tracker unload (default directory): removes /sys/fs/bpf/tandem" \
		"/sys/fs/bpf/tandem exists already, or not root"
else
	default_loaded=1
	ksft_check "tracker unload (default directory): removes /sys/fs/bpf/tandem" \
		sh -c "env -u TANDEM_TRACKER_DIR '$T' tracker load >/dev/null &&
		       [ -e /sys/fs/bpf/tandem/tracker/meta ] &&
		       env -u TANDEM_TRACKER_DIR '$T' tracker unload >/dev/null &&
		       [ ! -e /sys/fs/bpf/tandem ]"
	env -u TANDEM_TRACKER_DIR "$T" tracker unload >/dev/null 2>&1
	default_loaded=
fi
ksft_finish
