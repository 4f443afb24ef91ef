#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tandemctl(8), tandem-agent(8) and tandem(4) against the sources, so they cannot drift:
# selftests/lib/man_pages.py says what is compared. About 1 s.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
for need in groff man lexgrog; do
	command -v $need >/dev/null || missing="${missing:-} $need"
done
if [ ! -x "$T" ] || [ -n "${missing:-}" ] || ! /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
	ksft_plan 1
	ksft_skip "man pages" "needs $T, groff, man-db and python3-yaml (missing:${missing:-})"
	ksft_finish
fi
exec /usr/bin/python3 "$top/selftests/lib/man_pages.py" "$top" "$T"
