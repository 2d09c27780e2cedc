#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# debuginfod look-up time, cold cache against warm cache, in one run.
# The debug file is bpfprof's own (objcopy --only-keep-debug of ./bpfprof,
# a few MB of DWARF: a real program's size), served by a real debuginfod on
# 127.0.0.1; the program listed is a stripped copy of ./bpfprof (a build-id
# no local directory has).  `bpfprof list` names its functions each time:
#   local  the debug file found in a --debug-dir (no network: the floor)
#   cold   from the server, into an empty libdebuginfod cache
#   warm   from the cache the cold run filled (the server is not asked)
# RUNS runs of each, interleaved; the table shows medians (wall ms of the
# whole `bpfprof list`) and the ratios.
#
#   sudo bench/debuginfod.sh            # from the repo root, after `make`
#   RUNS=15 sudo -E bench/debuginfod.sh
#
# Needs debuginfod (scripts/setup.sh --test), objcopy, strip.
set -euo pipefail
. bench/lib.sh debuginfod.sh
RUNS=${RUNS:-9}
bench_need_built ./bpfprof make
command -v debuginfod >/dev/null || die "debuginfod missing (scripts/setup.sh --test)"
bench_tmp bpfprof-dbgi
cleanup() { [ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

mkdir -p "$tmp/served" "$tmp/local"
cp ./bpfprof "$tmp/prog"
objcopy --only-keep-debug ./bpfprof "$tmp/served/prog.debug"
strip "$tmp/prog"
bid=$(readelf -n "$tmp/prog" | awk '/Build ID/ { print $3 }')
[ -n "$bid" ] || die "./bpfprof has no build-id"
mkdir -p "$tmp/local/.build-id/${bid:0:2}"
cp "$tmp/served/prog.debug" "$tmp/local/.build-id/${bid:0:2}/${bid:2}.debug"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F -p "$port" -d "$tmp/db.sqlite" "$tmp/served" >"$tmp/dfd.log" 2>&1 &
dpid=$!
url=http://127.0.0.1:$port
for i in $(seq 300); do
	curl -sf -o /dev/null "$url/buildid/$bid/debuginfo" && break
	[ "$i" = 300 ] && die "debuginfod did not serve the file: $(tail -3 "$tmp/dfd.log")"
	sleep 0.2
done

# One `bpfprof -v list` (us VAR=VALUE... -- OPTION...): the us of the whole
# command; the ms of the look-up (bpfprof's own -v line) to $tmp/lookup.
us() {
	local t0 t1 n envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	t0=$(date +%s%N)
	env -u DEBUGINFOD_URLS "${envs[@]}" ./bpfprof -v list "$@" "$tmp/prog" >"$tmp/out" 2>"$tmp/err"
	t1=$(date +%s%N)
	n=$(grep -c ' main$' "$tmp/out" || true)
	[ "$n" -ge 1 ] || die "list did not name main: ${envs[*]} $*"
	sed -n 's/.*debuginfod: .* in \([0-9.]*\) ms$/\1/p' "$tmp/err" >"$tmp/lookup"
	echo $(( (t1 - t0) / 1000 ))
}
: >"$tmp/local.us"; : >"$tmp/cold.us"; : >"$tmp/warm.us"; : >"$tmp/cold.ms"; : >"$tmp/warm.ms"
for r in $(seq "$RUNS"); do
	us -- --debug-dir "$tmp/local" >>"$tmp/local.us"
	rm -rf "$tmp/cache"; mkdir "$tmp/cache"
	us DEBUGINFOD_CACHE_PATH="$tmp/cache" DEBUGINFOD_URLS="$url" -- >>"$tmp/cold.us"
	[ -s "$tmp/lookup" ] || die "no look-up time in bpfprof -v's output"
	cat "$tmp/lookup" >>"$tmp/cold.ms"
	us DEBUGINFOD_CACHE_PATH="$tmp/cache" DEBUGINFOD_URLS="$url" -- >>"$tmp/warm.us"
	cat "$tmp/lookup" >>"$tmp/warm.ms"
done
l=$(median <"$tmp/local.us"); c=$(median <"$tmp/cold.us"); w=$(median <"$tmp/warm.us")
lc=$(median <"$tmp/cold.ms"); lw=$(median <"$tmp/warm.ms")
size=$(stat -c %s "$tmp/served/prog.debug")
printf "debug file %d bytes, %d runs each, medians\n" "$size" "$RUNS"
awk -v l="$l" -v c="$c" -v w="$w" -v lc="$lc" -v lw="$lw" 'BEGIN {
	printf "%-8s %12s %16s\n", "", "lookup_ms", "list_ms (x local)"
	printf "%-8s %12s %9.1f (%.2f)\n", "local", "-", l / 1000, 1
	printf "%-8s %12.2f %9.1f (%.2f)\n", "cold", lc, c / 1000, c / l
	printf "%-8s %12.2f %9.1f (%.2f)\n", "warm", lw, w / 1000, w / l
	printf "look-up cold / warm: %.1f\n", lc / lw }'
