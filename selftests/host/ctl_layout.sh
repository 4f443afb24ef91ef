#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# ctl/'s layering, read from its #include lines (Documentation/architecture.md):
# every folder includes only folders below it, so no library includes the CLI
# or a command and no include cycle can form; a library folder offers one
# header (its private ones stay inside it); libraries never exit() and keep
# no run state in file-scope variables.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
cd "$top/ctl" || exit 1
ksft_plan 6

# the layers, lowest first; a folder may include its own and lower ones
rank() {
	case $1 in
	lib) echo 0 ;; loadgen | scratch) echo 1 ;; module | tracker) echo 2 ;; model | metrics) echo 3 ;;
	calibrate) echo 4 ;; release) echo 5 ;; cli) echo 6 ;; cmd) echo 7 ;; *) echo 99 ;;
	esac
}
libs="lib loadgen scratch module tracker model metrics calibrate release"
# "FILE FOLDER/HEADER" for every include of a ctl header
includes=$(grep -o '^#include "[a-z]*/[a-z_]*\.h"' -- */*.[ch] | sed 's/:#include "/ /; s/"$//')
folders=$(ls -d */ | tr -d /)
unknown=$(for d in $folders; do [ "$(rank "$d")" = 99 ] && echo "$d"; done)
ksft_expect_eq "every folder has a layer (a new one goes into this test and architecture.md)" \
	"$unknown" ""

up=$(while read -r f h; do
	a=${f%%/*} b=${h%%/*}
	[ "$(rank "$b")" -gt "$(rank "$a")" ] && echo "$f includes $h"
done <<<"$includes")
[ -n "$up" ] && echo "$up" | sed 's/^/# /'
ksft_expect_eq "includes go down the layers only (no library includes cli/ or cmd/)" "$up" ""

# file-level cycles, also within a folder: tsort refuses a graph with a loop
loop=$(while read -r f h; do echo "$f $h"; done <<<"$includes" | tsort 2>&1 >/dev/null)
[ -n "$loop" ] && echo "$loop" | sed 's/^/# /'
ksft_expect_eq "no include cycle between files" "$loop" ""

# headers of a library folder included from outside it: one per folder
many=$(for d in $libs; do
	[ "$d" = lib ] && continue	# small utilities, one header each
	n=$(while read -r f h; do [ "${f%%/*}" != "$d" ] && [ "${h%%/*}" = "$d" ] && echo "$h"; done \
		<<<"$includes" | sort -u)
	[ "$(echo "$n" | grep -c .)" -gt 1 ] && echo "$d:" $n
done)
ksft_expect_eq "each library folder offers one header" "$many" ""

lib_files=$(for d in $libs; do ls "$d"/*.c; done)
# shellcheck disable=SC2086
ex=$(grep -n '\bexit(' $lib_files | grep -v '_exit(')
ksft_expect_eq "libraries return errors, never exit()" "$ex" ""

# file-scope variables that are not const: run state would outlive a run.
# lib/log.c (where error lines go) and lib/out.c (the CLI's printer) are
# process configuration, set by the program, not by a run.
# shellcheck disable=SC2086
st=$(grep -n '^static [^(]*\(;\|=\)' $lib_files | grep -v 'static const' |
	grep -v '^lib/log\.c:\|^lib/out\.c:')
ksft_expect_eq "no mutable file-scope state in the libraries" "$st" ""
ksft_finish
