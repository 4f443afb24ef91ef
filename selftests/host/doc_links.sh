#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every relative link and #anchor of README.md and Documentation/**/*.md
# resolves, and so does every "Documentation/PAGE.md#anchor" named in the
# tree's scripts and sources (selftests/lib/doc_links.py; anchors as GitHub
# writes them). The checker is first shown a small tree with one broken
# link and one broken anchor, which it must report. Each section of a
# results page (Documentation/results/*.md, "## " headings) is dated, newest
# first (by the latest date its heading names). Under 1 s.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
PY=/usr/bin/python3
ksft_plan 3
tmp=$(mktemp -d /tmp/tandem-doclinks-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# 1: a tree with a good link, a missing page and a missing heading
mkdir -p "$tmp/t/Documentation/results"
printf '# Top\n[ok](Documentation/results/a.md#the-run-2026-12-06-idle)\n[gone](Documentation/b.md)\n' \
	>"$tmp/t/README.md"
# shellcheck disable=SC2016 # the backquotes are Markdown's, not a shell's
printf '# A\n## The run (2026-12-06, idle)\n[bad](#no-such-heading)\n```\n[code](nowhere.md)\n```\n' \
	>"$tmp/t/Documentation/results/a.md"
"$PY" "$top/selftests/lib/doc_links.py" "$tmp/t" >"$tmp/o1" 2>&1
rc=$?
sed 's/^/# /' "$tmp/o1"
ksft_check "the checker reports a missing page and a missing heading, nothing else (exit $rc)" \
	bash -c "[ $rc -eq 1 ] && grep -q 'README.md:3: Documentation/b.md: no such file' '$tmp/o1' &&
		grep -q 'a.md:3: a.md#no-such-heading: no heading' '$tmp/o1' &&
		grep -q 'checked 4 links, 2 broken' '$tmp/o1'"

# 2: the tree's own links
"$PY" "$top/selftests/lib/doc_links.py" "$top" >"$tmp/o2" 2>&1
rc=$?
sed 's/^/# /' "$tmp/o2"
ksft_check "every documentation link and anchor resolves ($(tail -1 "$tmp/o2"))" [ $rc -eq 0 ]

# 3: results pages: every section dated, newest first
"$PY" - "$top"/Documentation/results/*.md >"$tmp/o3" 2>&1 <<'PYEOF'
import re, sys
bad = 0
for page in sys.argv[1:]:
    last, fenced = "9999-99-99", False
    for n, line in enumerate(open(page, encoding="utf-8"), 1):
        if re.match(r"\s*(```|~~~)", line):
            fenced = not fenced
        if fenced or not line.startswith("## "):
            continue
        dates = re.findall(r"\d{4}-\d{2}-\d{2}", line)
        if not dates:
            print("%s:%d: no date: %s" % (page, n, line.strip())); bad += 1
        elif max(dates) > last:
            print("%s:%d: newer than the section above: %s" % (page, n, line.strip())); bad += 1
        else:
            last = max(dates)
print("%d out of order or undated" % bad)
sys.exit(1 if bad else 0)
PYEOF
rc=$?
sed 's/^/# /' "$tmp/o3"
ksft_check "every results section is dated, newest first" [ $rc -eq 0 ]
ksft_finish
