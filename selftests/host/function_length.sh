#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# No C function of the code folders (ctl/, agent/, slurm/, kmod/, bpf/,
# predictor/; tests live in selftests/) is over 60 lines, its signature and
# braces included (the house style asks about 40), unless the line before it,
# or before its SEC("...") line, carries a comment that says why: "/* long:
# REASON */". Function extents come from Universal Ctags (line: and end:),
# every file read as C (it would read a .h as C++ and find no function).
# Offenders are listed as "LINES FILE:LINE NAME".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
cd "$top" || exit 1
max=60
ksft_plan 2

if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
	ksft_skip "ctags finds the functions" "Universal Ctags not installed"
	ksft_skip "every function is short or justified" "Universal Ctags not installed"
	ksft_finish
fi
# the sources, from the tree itself (as architecture_map.sh finds them)
files=$(find ctl agent slurm kmod bpf predictor -path predictor/data -prune -o -type f \
	\( -name '*.[ch]' -o -name '*.cu' \) -print | grep -v '\.mod\.c$' | sort)

# "LINES FILE LINE NAME" for every function definition
# shellcheck disable=SC2086
funcs=$(ctags --language-force=C --kinds-C=f --fields=+ne -o - $files 2>/dev/null |
	awk -F'\t' '$4 == "f" { l = e = ""
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^line:/) l = substr($i, 6)
			if ($i ~ /^end:/) e = substr($i, 5)
		}
		if (l != "" && e != "") print e - l + 1, $2, l, $1 }')
ksft_expect_eq "ctags finds the functions" "$([ "$(echo "$funcs" | grep -c .)" -gt 500 ] && echo yes)" yes

# the line before line n of f, or before the SEC() line there
justified() {
	local prev
	prev=$(sed -n "$(($2 - 1))p" "$1")
	case $prev in SEC\(*) prev=$(sed -n "$(($2 - 2))p" "$1") ;; esac
	case $prev in *'/*'*long:*) return 0 ;; *'//'*long:*) return 0 ;; esac
	return 1
}

long=$(echo "$funcs" | while read -r n f l name; do
	[ "$n" -gt "$max" ] || continue
	justified "$f" "$l" || echo "$n $f:$l $name"
done | sort -rn)
name="every function over $max lines is split or justified (/* long: why */ before it)"
if [ -z "$long" ]; then
	ksft_pass "$name"
else
	# shellcheck disable=SC2001
	echo "$long" | sed "s|^|# over $max lines: |"
	ksft_fail "$name"
fi
ksft_finish
