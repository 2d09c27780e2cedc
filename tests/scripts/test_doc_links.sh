#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Every link of README.md and docs/*.md resolves to a file of the tree (and a
# heading of it); and the check itself finds a broken link and a bad anchor.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
/usr/bin/python3 "$here/doc_links.py" "$root"

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/docs"
printf '# A\n## Two words\n[ok](docs/b.md#b) [ok](#two-words)\n' > "$t/README.md"
printf '# B\n[up](../README.md#a)\n' > "$t/docs/b.md"
/usr/bin/python3 "$here/doc_links.py" "$t" >/dev/null
printf '[gone](docs/c.md) [bad](#nowhere)\n' >> "$t/README.md"
if out=$(/usr/bin/python3 "$here/doc_links.py" "$t"); then
	echo "test_doc_links: a broken link passed" >&2; exit 1
fi
[ "$(echo "$out" | wc -l)" = 2 ] || { echo "test_doc_links: want 2 broken: $out" >&2; exit 1; }
echo "test_doc_links: ok"
