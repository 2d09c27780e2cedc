#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Every relative link of README.md and docs/*.md resolves: to a file of the
tree, and a #fragment to a heading of that file (GitHub's anchors).  Prints
each broken link; exit 1 if any."""
import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def slug(heading):
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def prose(text):
    """The text outside fenced code blocks and inline code."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def anchors(path):
    seen, out = {}, set()
    for line in prose(path.read_text()):
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    return out


def main():
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    bad = 0
    for page in pages:
        for n, line in enumerate(prose(page.read_text()), 1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue
                path, _, frag = target.partition("#")
                dest = (page.parent / path).resolve() if path else page
                if not dest.exists() or ROOT not in (dest, *dest.parents):
                    print("%s: %s: no such file" % (page.relative_to(ROOT), target))
                    bad += 1
                elif frag and dest.suffix == ".md" and frag not in anchors(dest):
                    print("%s: %s: no such heading" % (page.relative_to(ROOT), target))
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
