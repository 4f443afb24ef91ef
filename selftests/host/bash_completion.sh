#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# packaging/tandemctl.bash-completion: `complete -p` registers it; called
# with COMP_WORDS/COMP_CWORD as bash calls it, COMPREPLY holds the objects,
# verbs and options that `tandemctl --help` lists (read here with sed, apart
# from the completion's own parsing), the fixed values of options, only
# directories for DIR and only .onnx files for MODEL.onnx, commands after
# "--" and ":::", and the tracker's dataset names from a tracker loaded on
# this host (root and BTF). About 3 s.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
# oneline TEXT: its words on one line
oneline() { echo "$1" | tr -s ' \n' '  ' | sed 's/^ //; s/ $//'; }
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
COMP=$top/packaging/tandemctl.bash-completion
if [ ! -x "$T" ]; then
	ksft_plan 1
	ksft_skip "bash completion" "needs $T"
	ksft_finish
fi
tmp=$(mktemp -d /tmp/tandem-comp-XXXXXX)
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-comp-$$
trap '"$T" tracker unload >/dev/null 2>&1; rm -rf "$tmp"' EXIT

"$T" --help | sed -n 's/^  tandemctl //p' >"$tmp/usage"
objects=$(cut -d' ' -f1 "$tmp/usage" | sort -u)
# "OBJECT VERB" lines: a lowercase word after the object
verbs_of() { awk -v o="$1" '$1 == o && $2 ~ /^[a-z]+$/ {print $2}' "$tmp/usage" | sort; }
with_verbs=$(awk '$2 ~ /^[a-z]+$/ {print $1}' "$tmp/usage" | sort -u)
ncmds=$(grep -c . "$tmp/usage")
ksft_plan $((1 + 1 + $(echo "$with_verbs" | grep -c .) + ncmds + 10 + 3))

# comp WORD...: COMPREPLY, sorted, one per line, for the words (the last is the cursor's)
comp() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_tandemctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$T" "$@" 2>"$tmp/comp.err" |
		grep . | sort -u
}
# has NAME WANT WORD...: the completion of WORD... includes every line of WANT
has() {
	local name=$1 want=$2 got missing
	shift 2
	got=$(comp "$@")
	missing=$(comm -23 <(echo "$want" | grep . | sort -u) <(echo "$got"))
	if [ -z "$missing" ] && [ ! -s "$tmp/comp.err" ]; then
		ksft_pass "$name"
	else
		ksft_diag "missing: $(oneline "$missing"); got: $(oneline "$got" | head -c 300); stderr: $(head -c 200 "$tmp/comp.err")"
		ksft_fail "$name"
	fi
}
# exact NAME WANT WORD...: the completion is exactly WANT
exact() {
	local name=$1 want=$2
	shift 2
	ksft_expect_eq "$name" "$(comp "$@" | tr '\n' ' ')" "$(echo "$want" | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')"
}

reg=$(bash -c '. "$1"; complete -p tandemctl' _ "$COMP" 2>&1)
ksft_expect_eq "complete -p tandemctl: the function is registered" "$reg" "complete -F _tandemctl tandemctl"

exact "objects: the ones --help lists" "$objects" ""
for o in $with_verbs; do
	has "$o: its verbs from --help ($(oneline "$(verbs_of "$o")"))" "$(verbs_of "$o")" "$o" ""
done

# every command's options, read from its usage with a regular expression
while read -r obj rest; do
	verb=$(awk '$1 ~ /^[a-z]+$/ {print $1}' <<<"$rest")
	args=${rest#"$verb"}
	opts=$(grep -oE '(^|[][ (|])--?[A-Za-z][A-Za-z0-9-]*' <<<"$args" | sed 's/^[][ (|]//')
	# shellcheck disable=SC2086
	has "$obj${verb:+ $verb} -: its $(echo "$opts" | grep -c .) options" "$opts" $obj $verb -
done <"$tmp/usage"

exact "calibrate --cold: fadvise drop-caches" "fadvise drop-caches" calibrate --dataset d --cold ""
exact "model --evict: random lru 2q" "random lru 2q" model --evict ""
exact "tracker load --attach: its kinds" "auto tracepoint fentry kprobe" tracker load --attach ""
exact "config set: the knobs" "cxl_node steer prefetch_kbps steer_kbps" config set ""
exact "config set steer: on off" "on off" config set cxl_node 1 steer ""

mkdir -p "$tmp/d/data1" "$tmp/d/data2"
touch "$tmp/d/dfile" "$tmp/d/net.onnx" "$tmp/d/notes.txt"
exact "loadgen DIR: directories only" "$tmp/d/data1 $tmp/d/data2" loadgen "$tmp/d/d"
exact "predict MODEL.onnx: directories and .onnx files" "$tmp/d/data1 $tmp/d/data2 $tmp/d/net.onnx" \
	predict "$tmp/d/"
has "run -- CMD ::: CMD: commands after '--' and ':::'" "true" run --dataset d -- bash -c x ::: tru
# scratch names from 'scratch list', which reads the state folders' configs
mkdir -p "$tmp/scratch/compscr"
printf 'name=compscr\nsize=1048576\nnode=0\ndrain_to=/tmp\n' >"$tmp/scratch/compscr/config"
export TANDEM_SCRATCH_DIR=$tmp/scratch TANDEM_SCRATCH_RECORD_DIR=$tmp/scratch-record
exact "scratch show NAME: the scratch names" "compscr" scratch show ""
exact "run --scratch NAME: the scratch names" "compscr" run --dataset d --scratch co
unset TANDEM_SCRATCH_DIR TANDEM_SCRATCH_RECORD_DIR

if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] && "$T" tracker load >/dev/null 2>&1; then
	echo x >"$tmp/d/dfile"
	"$T" tracker dataset compdata "$tmp/d/dfile" >/dev/null
	exact "stats --dataset: the tracker's datasets" "compdata" stats --dataset ""
	exact "track --dataset PREFIX: the tracker's datasets" "compdata" track --dataset comp
	"$T" tracker unload >/dev/null
else
	ksft_skip "stats --dataset: the tracker's datasets" "needs root, BTF and a tracker"
	ksft_skip "track --dataset PREFIX: the tracker's datasets" "needs root, BTF and a tracker"
fi
# without tandem.ko (this host) the dataset list fails: nothing offered, nothing printed
if [ -d /sys/module/tandem ]; then
	ksft_skip "steer DATASET without tandem.ko" "tandem.ko is loaded here"
else
	exact "steer DATASET without tandem.ko: nothing, quietly" "" steer ""
fi
ksft_finish
