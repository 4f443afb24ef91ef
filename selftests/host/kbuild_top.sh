#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The top-level Kbuild is tandem.ko's one Kbuild file (Documentation/install.md):
#  - its tandem-y names every kmod/*.c once, and no object without a source;
#  - the kernel's own external-module build works from the top of the tree,
#    as a newcomer runs it: `make -C /lib/modules/KVER/build M=$PWD modules`
#    in a copy of the tree's top (Kbuild, the Makefile beside it, kmod/):
#    tandem.ko appears at the top, for KVER (modinfo vermagic), named tandem,
#    its objects in kmod/;
#  - `make module` builds from the same file (its folder's Kbuild links to it).
# One kernel: KBUILD_TOP_KVER=RELEASE, else the first with headers in
# /lib/modules; SKIP (with the reason) when none has headers. About 10 s
# (one module build) on an idle machine.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
B=${B:-build}
ksft_plan 5

# tandem-y's objects, over its continued lines
objs=$(sed -n '/^tandem-y :=/,/[^\\]$/p' "$top/Kbuild" | sed 's/^tandem-y :=//; s/\\$//' |
	tr ' \t' '\n\n' | grep . | sort)
srcs=$(cd "$top" && ls kmod/*.c | grep -v '\.mod\.c$' | sed 's/\.c$/.o/' | sort)
ksft_expect_eq "Kbuild: tandem-y names every kmod/*.c, nothing else" \
	"$(echo $objs)" "$(echo $srcs)"

kver=${KBUILD_TOP_KVER:-$(ls -d /lib/modules/*/build/Makefile 2>/dev/null | head -n 1 |
	sed 's|^/lib/modules/||; s|/build/Makefile$||')}
if [ -z "$kver" ] || [ ! -f "/lib/modules/$kver/build/Makefile" ]; then
	why="no kernel headers in /lib/modules/*/build (make deps)"
	for n in 2 3 4 5; do ksft_skip "kernel build from the top ($n)" "$why"; done
	ksft_finish
fi

tmp=$(mktemp -d /tmp/tandem-kbuild-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tree/kmod/uapi/linux"
(cd "$top" && cp Kbuild Makefile "$tmp/tree/" &&
	cp $(ls kmod/*.c kmod/*.h | grep -v '\.mod\.c$') "$tmp/tree/kmod/" &&
	cp kmod/uapi/linux/*.h "$tmp/tree/kmod/uapi/linux/")
t0=$(date +%s)
(cd "$tmp/tree" && timeout -k 5 300 make -j2 -C "/lib/modules/$kver/build" M="$PWD" modules) \
	>"$tmp/make.log" 2>&1
st=$?
[ $st -ne 0 ] && grep -E 'error|Error' "$tmp/make.log" | head -10 | sed 's/^/# /'
ksft_expect_eq "make -C /lib/modules/$kver/build M=\$PWD modules from the top: exit 0 ($(($(date +%s) - t0)) s)" \
	"$st" 0
ko=$tmp/tree/tandem.ko
ksft_expect_eq "tandem.ko at the top: vermagic $kver, name tandem" \
	"$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1) $(modinfo -F name "$ko" 2>/dev/null)" \
	"$kver tandem"
built=$(cd "$tmp/tree" && ls kmod/*.o 2>/dev/null | sort)
ksft_expect_eq "its objects in kmod/, one per source" "$(echo $built)" "$(echo $srcs)"

# make module's folder for this kernel, when it was built: its Kbuild is this one
link=$(readlink "$top/$B/kmod/$kver/Kbuild" 2>/dev/null)
if [ -z "$link" ]; then
	ksft_skip "make module builds from the top-level Kbuild" "no $B/kmod/$kver: make module KVER=$kver"
else
	ksft_expect_eq "make module builds from the top-level Kbuild ($B/kmod/$kver/Kbuild)" \
		"$link" "$top/Kbuild"
fi
ksft_finish
