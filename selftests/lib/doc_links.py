#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every relative link of the documentation resolves.

Reads README.md and Documentation/**/*.md: each [text](target) outside code
(fenced blocks and inline backquotes) that is not a URL must name a file or
folder of the tree, and its #anchor, where the target is a Markdown page, one
of that page's headings as GitHub writes them (lowercase, spaces to '-',
punctuation dropped, a repeated heading gets -1, -2, ...). Then every
"Documentation/PAGE.md" followed by "#anchor" written anywhere in the tracked tree (scripts,
C sources, tests) must resolve the same way.

Usage: doc_links.py TOP; prints one line per broken link, "checked N links";
exits 1 when any is broken.
"""
import glob
import os
import re
import subprocess
import sys

TOP = sys.argv[1] if len(sys.argv) > 1 else "."
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s*\[[^\]]+\]:\s+(\S+)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)*?\1")
SELF = ("selftests/lib/doc_links.py", "selftests/host/doc_links.sh")
TEXTREF = re.compile(r"(Documentation/[A-Za-z0-9_./-]+\.md)#([A-Za-z0-9_-]+)")


def slug(text):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # punctuation dropped (\w keeps _)
    return text.replace(" ", "-")


def prose_lines(path):
    """(number, line) of each line outside fenced code blocks."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield n, line.rstrip("\n")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, out = {}, set()
        for _, line in prose_lines(path):
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else "%s-%d" % (s, k))
        _anchors[path] = out
    return _anchors[path]


def resolve(base_dir, target):
    """None when target resolves, else why not."""
    path, _, anchor = target.partition("#")
    full = os.path.normpath(os.path.join(base_dir, path)) if path else None
    if full is not None and not os.path.exists(full):
        return "no such file"
    if not anchor:
        return None
    page = full if full is not None else None
    if page is None or not page.endswith(".md") or os.path.isdir(page):
        return None if page is not None else "anchor without a page"
    if anchor not in anchors(page):
        return "no heading #" + anchor
    return None


def check_pages(bad):
    pages = [os.path.join(TOP, "README.md")]
    pages += sorted(glob.glob(os.path.join(TOP, "Documentation", "**", "*.md"),
                              recursive=True))
    n = 0
    for page in pages:
        base = os.path.dirname(page)
        for ln, line in prose_lines(page):
            code_free = INLINE_CODE.sub("", line)
            targets = [m.group(1) for m in LINK.finditer(code_free)]
            m = REFDEF.match(code_free)
            if m:
                targets.append(m.group(1))
            for t in targets:
                if re.match(r"^[a-z][a-z0-9+.-]*:", t):  # http:, mailto:, ...
                    continue
                if t.startswith("#"):
                    t = os.path.basename(page) + t
                n += 1
                why = resolve(base, t)
                if why:
                    bad.append("%s:%d: %s: %s" % (os.path.relpath(page, TOP), ln, t, why))
    return n


def check_text_refs(bad):
    git = subprocess.run(["git", "-C", TOP, "ls-files", "-co", "--exclude-standard"],
                         capture_output=True, text=True)
    if git.returncode == 0:
        files = git.stdout.split()
    else:  # not a git tree: every file
        files = [os.path.relpath(os.path.join(d, f), TOP)
                 for d, _, fs in os.walk(TOP) for f in fs]
    n = 0
    for rel in files:
        if rel in SELF:  # the checker and its test name example links
            continue
        full = os.path.join(TOP, rel)
        if not os.path.isfile(full) or os.path.getsize(full) > 2 << 20:
            continue
        try:
            with open(full, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue
        for ln, line in enumerate(text.splitlines(), 1):
            for m in TEXTREF.finditer(line):
                n += 1
                why = resolve(TOP, m.group(1) + "#" + m.group(2))
                if why:
                    bad.append("%s:%d: %s#%s: %s" % (rel, ln, m.group(1), m.group(2), why))
    return n


def main():
    bad = []
    n = check_pages(bad) + check_text_refs(bad)
    for b in bad:
        print(b)
    print("checked %d links, %d broken" % (n, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
