#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Install everything bpfprof needs to build, run and test, on Debian bookworm.
# Idempotent: re-running only checks what is there.  Called by `make deps`.
#   scripts/setup.sh          build + run dependencies (with view's: graphviz, speedscope)
#   scripts/setup.sh --test   also the test dependencies and the real clients
#   scripts/setup.sh --bench  also what `make bench` compares against (uftrace, bpftrace)
set -euo pipefail

want_test=0 want_bench=0
[ "${1:-}" = "--test" ] && want_test=1
[ "${1:-}" = "--bench" ] && want_bench=1

if [ "$(id -u)" != 0 ]; then
	echo "setup.sh: must run as root (installs Debian packages)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
. /etc/os-release
codename=${VERSION_CODENAME:-bookworm}

# libbpf in bookworm is 1.1 (no uprobe_multi helpers); 1.4 is in backports.
bp=/etc/apt/sources.list.d/bpfprof-backports.list
if [ "$codename" = bookworm ] && ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "deb http://deb.debian.org/debian bookworm-backports main" > "$bp"
	rm -f /var/lib/bpfprof-apt-updated
fi

pkgs_build="make gcc clang llvm pkg-config libelf-dev libdw-dev zlib1g-dev liblzma-dev systemtap-sdt-dev libmicrohttpd-dev libcapstone-dev"
pkgs_bp="libbpf-dev bpftool"
# what `bpfprof view` draws with: Graphviz for the call graph (speedscope, from npm, below)
pkgs_view="graphviz"
# real services for the governor bench (bench/services.sh): bounded load on 127.0.0.1
pkgs_bench="uftrace bpftrace time redis-server redis-tools nginx wrk"
pkgs_test="libcmocka-dev python3 python3-pytest gdb time protobuf-compiler graphviz bpftrace binutils libc6-dbg xz-utils gzip sqlite3 libsqlite3-dev chromium golang-go python3-websocket libclang-rt-14-dev linux-perf prometheus python3.11 python3.11-dev"

missing() {
	local p out=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out="$out $p"
	done
	echo "$out"
}

libbpf_ok() {
	local v
	v=$(dpkg-query -W -f='${Version}' libbpf-dev 2>/dev/null || true)
	[ -n "$v" ] && dpkg --compare-versions "$v" ge "1:1.4" && command -v bpftool >/dev/null &&
		bpftool version >/dev/null 2>&1
}

need=$(missing $pkgs_build $pkgs_view)
[ $want_test = 1 ] && need="$need$(missing $pkgs_test)"
[ $want_bench = 1 ] && need="$need$(missing $pkgs_bench)"
if [ -n "$need" ] || ! libbpf_ok; then
	if [ ! -e /var/lib/bpfprof-apt-updated ] || [ -n "$(find /var/lib/bpfprof-apt-updated -mmin +600 2>/dev/null)" ]; then
		apt-get update -qq
		touch /var/lib/bpfprof-apt-updated
	fi
	[ -n "$need" ] && apt-get install -y -qq --no-install-recommends $need
	if ! libbpf_ok; then
		tgt=""
		[ "$codename" = bookworm ] && tgt="-t bookworm-backports"
		apt-get install -y -qq --no-install-recommends $tgt $pkgs_bp
	fi
fi
libbpf_ok || { echo "setup.sh: libbpf-dev >= 1.4 and bpftool are required" >&2; exit 1; }
echo "setup.sh: build dependencies ok (libbpf $(dpkg-query -W -f='${Version}' libbpf-dev))"

# speedscope, `bpfprof view`'s timeline and flame graph, and a real client the
# end-to-end tests load outputs into (besides chromium, go tool pprof and dot
# above): the web app at the version pinned by tests/clients/package-lock.json,
# into tests/clients/node_modules, where view finds it beside the binary.
clients="$(cd "$(dirname "$0")/.." && pwd)/tests/clients"
# nodejs may come from elsewhere with its own npm: only a missing npm is installed.
if ! command -v npm >/dev/null; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends npm
fi
if [ ! -e "$clients/node_modules/speedscope/dist/release/index.html" ]; then
	npm ci --prefix "$clients" --no-audit --no-fund --loglevel=error
fi
echo "setup.sh: view dependencies ok (graphviz, speedscope)"
if [ $want_test = 1 ]; then
	echo "setup.sh: test clients ok (chromium, go tool pprof, dot, prometheus, speedscope, protoc)"
fi
