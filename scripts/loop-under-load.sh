#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs end-to-end tests again and again under the load of issue #26: two CPU
# hogs and another bpfprof recording a busy program (tests/progs/busy: its
# main never returns, so its uprobes' SRCU readers stay pending machine-wide,
# and every link release on the machine waits for them).
#
#   scripts/loop-under-load.sh [-n RUNS] TEST...     (as root, from the repository)
#
# TEST is a pytest node id (tests/e2e/test_exec.py::test_x) or file.  Each run
# runs them all once; the loop goes on after a failure and counts.  Prints one
# line per run and, at the end, "N of RUNS runs passed"; exits non-zero unless
# every run passed.  The load is stopped on any exit (trap).  BPFPROF_BIN
# selects the binary, as for the tests.
set -u
runs=20
if [ "${1:-}" = -n ]; then
	runs=$2
	shift 2
fi
[ $# -gt 0 ] || { echo "usage: $0 [-n RUNS] TEST..." >&2; exit 2; }
cd "$(dirname "$0")/.." || exit 2
bin=${BPFPROF_BIN:-./bpfprof}
[ -x "$bin" ] && [ -x tests/progs/busy ] || { echo "loop-under-load: build first (make)" >&2; exit 2; }

tmp=$(mktemp -d)
pids=()
stop_load() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	# the recording's own end: its busy is killed, then bpfprof ends
	pkill -KILL -f "$tmp/busy" 2>/dev/null
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap stop_load EXIT
trap 'exit 130' INT TERM

cp tests/progs/busy "$tmp/busy"
for _ in 1 2; do
	sh -c 'while :; do :; done' &
	pids+=($!)
done
"$bin" record -q -o "$tmp/load.bpfprof" -- "$tmp/busy" 0 loop-load >/dev/null 2>"$tmp/load.err" &
pids+=($!)
sleep 2

ok=0
for i in $(seq 1 "$runs"); do
	start=$(date +%s)
	if /usr/bin/python3 -m pytest -q -p no:cacheprovider "$@" >"$tmp/run.log" 2>&1; then
		ok=$((ok + 1))
		res=passed
	else
		res=FAILED
		cp "$tmp/run.log" "/tmp/loop-under-load.$i.log"
	fi
	echo "run $i: $res in $(( $(date +%s) - start )) s, load $(cut -d' ' -f1 /proc/loadavg)$([ $res = FAILED ] && echo ", log /tmp/loop-under-load.$i.log")"
done
echo "$ok of $runs runs passed"
[ "$ok" = "$runs" ]
