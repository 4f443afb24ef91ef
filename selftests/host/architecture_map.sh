#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Documentation/architecture.md's map is true: it names every source folder
# and every source file of ctl/, agent/, slurm/, kmod/, bpf/ and predictor/
# (*.c, *.h, *.S, *.cu, *.mk, Kbuild, *.sh, *.py; predictor/data/ is data and
# its records, not code) as a line "- `PATH`: what it is for", and every file
# the page names exists: the map's lines from the top of the tree, other
# paths in backquotes from the top or from ctl/ (the page's convention), a
# bare file name as the name of some file of the tree. Offenders are listed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
cd "$top" || exit 1
doc=Documentation/architecture.md
ksft_plan 5

# check NAME WHAT LIST: pass when LIST is empty, else list it as "# WHAT: X"
check() {
	if [ -z "$3" ]; then ksft_pass "$1"; return; fi
	# shellcheck disable=SC2001
	echo "$3" | sed "s|^|# $2: |"
	ksft_fail "$1"
}

# the source files, from the tree itself (a file not yet added to git counts)
sources=$(find ctl agent slurm kmod bpf predictor -path predictor/data -prune -o -type f \
	\( -name '*.[chS]' -o -name '*.cu' -o -name '*.mk' -o -name Kbuild \
	-o -name '*.sh' -o -name '*.py' \) -print | grep -v '\.mod\.c$' | sort)
folders=$(for f in $sources; do echo "${f%/*}/"; done | sort -u)
# the map: "- `PATH`:" lines
# shellcheck disable=SC2016 # the backquotes are the page's, not a shell's
entries=$(sed -n 's/^- `\([^`]*\)`:.*/\1/p' "$doc" | sort)
dups=$(echo "$entries" | uniq -d)

missing=$(comm -23 <(echo "$sources") <(echo "$entries" | grep -v '/$'))
check "every source file has a line in $doc" "not in the map" "$missing"

nofolder=$(comm -23 <(echo "$folders") <(echo "$entries" | grep '/$'))
check "every source folder has a line in $doc" "folder not in the map" "$nofolder"

gone=$(for e in $entries; do [ -e "$e" ] || echo "$e"; done)
check "every line of the map names a file or folder that exists" "in the map, not in the tree" "$gone"

check "no file has two lines in the map" "two lines" "$dups"

# every other file name in backquotes: PATH from the top or from ctl/, or a
# bare NAME of some file of the tree (outside build/ and .git/)
# shellcheck disable=SC2016
names=$(grep -o '`[^`]*`' "$doc" | tr -d '`' | sed 's/[,;:)]*$//' |
	grep -E '^[A-Za-z0-9_./-]+(\.(c|h|S|cu|mk|sh|py|md|yaml|bpf\.c)|Kbuild)$' | sort -u)
all=$(find . -path ./build -prune -o -path ./.git -prune -o -type f -printf '%f\n' | sort -u)
stale=$(for n in $names; do
	case $n in
	*/*) [ -e "$n" ] || [ -e "ctl/$n" ] || echo "$n" ;;
	*) echo "$all" | grep -qxF "$n" || echo "$n" ;;
	esac
done)
check "every file $doc names exists" "named, no such file" "$stale"
ksft_finish
