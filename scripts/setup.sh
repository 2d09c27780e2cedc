#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Install everything bpfprof needs to build, run and test, on Debian bookworm.
# Idempotent: re-running only checks what is there.  Called by `make deps`.
#   scripts/setup.sh          build + run dependencies (with view's: graphviz, speedscope)
#   scripts/setup.sh --test   also the test dependencies and the real clients
#   scripts/setup.sh --bench  also what `make bench` compares against (uftrace, bpftrace)
#                             and the real services of bench/services.sh
# The two options combine (`--test --bench`).
set -euo pipefail

want_test=0 want_bench=0
for a in "$@"; do
	case $a in
	--test) want_test=1 ;;
	--bench) want_bench=1 ;;
	-h|--help) sed -n '3,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "setup.sh: unknown option '$a' (--test, --bench)" >&2; exit 2 ;;
	esac
done

if [ "$(id -u)" != 0 ]; then
	echo "setup.sh: must run as root (installs Debian packages)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
. /etc/os-release
codename=${VERSION_CODENAME:-bookworm}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/apt-sources.sh"

# apt-get quiet when it works; everything it said (its reason) when it fails.
apt_run() {
	local log rc=0
	log=$(mktemp)
	apt-get "$@" >"$log" 2>&1 || rc=$?
	if [ $rc != 0 ]; then
		cat "$log" >&2
		echo "setup.sh: apt-get $* failed (exit $rc)" >&2
	fi
	rm -f "$log"
	return $rc
}

# libbpf in bookworm is 1.1 (no uprobe_multi helpers); 1.4 is in backports,
# added from the mirror this machine's apt sources already use for bookworm.
bp=/etc/apt/sources.list.d/bpfprof-backports.list
if [ "$codename" = bookworm ] && ! apt_suite_uri bookworm-backports main >/dev/null; then
	mirror=$(apt_suite_uri bookworm main) || {
		echo "setup.sh: no 'bookworm main' entry in the apt sources to take a mirror from;" \
			"add bookworm-backports to them by hand" >&2
		exit 1
	}
	echo "deb $mirror bookworm-backports main" > "$bp"
	echo "setup.sh: added bookworm-backports from $mirror ($bp)"
	rm -f /var/lib/bpfprof-apt-updated
fi

# elfutils' libraries must all come from one release (libdw1 wants libelf1 of
# its exact version): they are installed from the suite libelf1 already came
# from (bookworm-backports when libbpf-dev was installed from there first).
# libdebuginfod-dev: debug files fetched by build-id (symbols/debuginfod.c)
pkgs_elf="libelf-dev libdw-dev libdebuginfod-dev"
pkgs_build="make gcc g++ clang llvm pkg-config zlib1g-dev liblzma-dev systemtap-sdt-dev libmicrohttpd-dev libcapstone-dev"
pkgs_bp="libbpf-dev bpftool"
# what `bpfprof view` draws with: Graphviz for the call graph (speedscope, from npm, below)
pkgs_view="graphviz"
# real services for the governor bench (bench/services.sh): bounded load on 127.0.0.1
pkgs_bench="uftrace bpftrace time redis-server redis-tools nginx wrk black"
# dpkg-dev: dpkg-shlibdeps for make deb (tests/e2e/test_deb.py); procps: pgrep; libcap2-bin: capsh; python3.11-dev: tests/progs/pyembed*, pyshared
pkgs_test="libcmocka-dev dpkg-dev man-db groff-base python3 python3-pytest gdb time protobuf-compiler graphviz bpftrace binutils libc6-dbg xz-utils gzip sqlite3 libsqlite3-dev chromium golang-go python3-websocket libclang-rt-14-dev linux-perf prometheus python3.11 python3.11-dev procps libcap2-bin zsh python3-trio python3-aiohttp"
if [ $want_test = 1 ] || [ $want_bench = 1 ]; then
	# gdb, linux-perf, bpftrace and uftrace pull libdebuginfod1 and libdw1
	pkgs_elf="$pkgs_elf libdw1 libdebuginfod1"
fi
# debuginfod, the server: tests/e2e/test_debuginfod.py serves debug files of
# test programs on 127.0.0.1 (an elfutils package: installed as its libraries)
[ $want_test = 1 ] && pkgs_elf="$pkgs_elf debuginfod"

missing() {
	local p out=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out="$out $p"
	done
	echo "$out"
}

# The suite the installed libelf1 came from when apt does not take that suite
# by default (priority < 500: bookworm-backports); nothing otherwise.
elf_suite() {
	apt-cache policy libelf1 2>/dev/null | awk '
		/^ \*\*\* / { inst = 1; next }
		/^     [^ ]/ { inst = 0 }
		inst && $1 < 500 && $2 ~ /^[a-z+]+:/ { split($3, s, "/"); print s[1]; exit }'
}

libbpf_ok() {
	local v
	v=$(dpkg-query -W -f='${Version}' libbpf-dev 2>/dev/null || true)
	[ -n "$v" ] && dpkg --compare-versions "$v" ge "1:1.4" && command -v bpftool >/dev/null &&
		bpftool version >/dev/null 2>&1
}

need_elf=$(missing $pkgs_elf)
need=$(missing $pkgs_build $pkgs_view)
[ $want_test = 1 ] && need="$need$(missing $pkgs_test)"
[ $want_bench = 1 ] && need="$need$(missing $pkgs_bench)"
if [ -n "$need_elf$need" ] || ! libbpf_ok; then
	if [ ! -e /var/lib/bpfprof-apt-updated ] || [ -n "$(find /var/lib/bpfprof-apt-updated -mmin +600 2>/dev/null)" ]; then
		apt_run update -q
		touch /var/lib/bpfprof-apt-updated
	fi
	if [ -n "$need_elf" ]; then
		s=$(elf_suite)
		# every elfutils library already installed moves with them
		[ -n "$s" ] && need_elf="$need_elf $(dpkg-query -W -f='${binary:Package} ${Status} ${source:Package}\n' \
			2>/dev/null | awk '$4 == "installed" && $5 == "elfutils" { sub(/:.*/, "", $1); print $1 }' | xargs)"
		[ -n "$s" ] && echo "setup.sh: elfutils from $s, as the installed libelf1"
		apt_run install -y -q --no-install-recommends ${s:+-t "$s"} $need_elf
	fi
	[ -n "$need" ] && apt_run install -y -q --no-install-recommends $need
	if ! libbpf_ok; then
		tgt=""
		[ "$codename" = bookworm ] && tgt="-t bookworm-backports"
		apt_run install -y -q --no-install-recommends $tgt $pkgs_bp
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
	apt_run update -q
	apt_run install -y -q --no-install-recommends npm
fi
if [ ! -e "$clients/node_modules/speedscope/dist/release/index.html" ]; then
	npm ci --prefix "$clients" --no-audit --no-fund --loglevel=error
fi
echo "setup.sh: view dependencies ok (graphviz, speedscope)"
if [ $want_test = 1 ]; then
	echo "setup.sh: test clients ok (chromium, go tool pprof, dot, prometheus, speedscope, protoc)"
fi
