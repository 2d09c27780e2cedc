#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# scripts/apt-sources.sh's apt_suite_uri on one-line and deb822 sources (make unit).
set -uo pipefail
. "$(dirname "$0")/../../scripts/apt-sources.sh"

fails=0 etc=$(mktemp -d)
trap 'rm -rf "$etc"' EXIT

# expect SUITE [COMPONENT] URI: apt_suite_uri prints URI (nothing when URI is "")
expect() {
	local want=${*: -1} got
	got=$(APT_ETC=$etc apt_suite_uri "${@:1:$#-1}")
	if [ "$got" != "$want" ]; then
		echo "FAIL ($1 ${2:-}): got '$got', want '$want'" >&2
		fails=$((fails + 1))
	fi
}
reset() { rm -rf "$etc"/*; mkdir -p "$etc/sources.list.d"; }

# one-line: comments, deb-src, options in brackets (with spaces), several components
reset
cat > "$etc/sources.list" <<'S'
# deb http://commented.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://one.example/debian bookworm contrib main non-free
deb http://one.example/debian-security bookworm-security main
S
expect bookworm http://one.example/debian
expect bookworm-security http://one.example/debian-security
expect bookworm contrib http://one.example/debian
expect bookworm-backports ""
expect bookworm non-free-firmware ""

# a .list in sources.list.d; suite must match exactly (bookworm is not bookworm-updates)
reset
echo "deb http://two.example/debian bookworm-updates main" > "$etc/sources.list.d/a.list"
echo "deb	http://tab.example/debian	bookworm	main # trailing comment" > "$etc/sources.list.d/b.list"
echo "deb http://ignored.example/debian bookworm main" > "$etc/sources.list.d/c.list.disabled"
expect bookworm http://tab.example/debian
expect bookworm-updates http://two.example/debian

# deb822 (Debian 12's default debian.sources): several suites and paragraphs,
# comments inside a paragraph, Enabled: no, several URIs, deb-src only
reset
cat > "$etc/sources.list.d/debian.sources" <<'S'
Types: deb-src
URIs: http://src.example/debian
Suites: bookworm-backports
Components: main

Types: deb
# http://snapshot.example/archive/debian/20250520T000000Z
URIs: http://three.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb deb-src
URIs: http://off.example/debian
Suites: trixie
Components: main
Enabled: no

Types: deb
URIs: http://four.example/debian-security http://five.example/debian-security
Suites: bookworm-security
Components: main contrib
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 -----END PGP PUBLIC KEY BLOCK-----
S
echo "Types: deb" > "$etc/sources.list.d/x.sources.off"
expect bookworm http://three.example/debian
expect bookworm-updates http://three.example/debian
expect bookworm-security http://four.example/debian-security
expect bookworm-security contrib http://four.example/debian-security
expect bookworm-backports ""
expect trixie ""
expect bookworm contrib ""

# last paragraph without a trailing blank line; field names in any case
printf 'types: deb\nuris: http://six.example/debian\nsuites: bookworm-backports\ncomponents: main' \
	> "$etc/sources.list.d/z.sources"
expect bookworm-backports http://six.example/debian

# one-line entries win over deb822 ones; nothing at all
echo "deb http://seven.example/debian bookworm main" > "$etc/sources.list"
expect bookworm http://seven.example/debian
reset
expect bookworm ""

[ $fails = 0 ] && echo "test_apt_sources: ok" || { echo "test_apt_sources: $fails failed" >&2; exit 1; }
