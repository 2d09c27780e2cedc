#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Per-call tracing overhead: tests/progs/spin calls one tiny function N times,
# run untraced, under `bpfprof record`, and under bpftrace with empty uprobe
# and uretprobe actions (the cheapest thing bpftrace can attach), RUNS times
# each; the table shows medians.
#
#   sudo bench/overhead.sh            # from the repo root, after `make`
#   N=200000 RUNS=5 FUNCS=small_push sudo -E bench/overhead.sh
#
# Two target functions, because the cost of a uprobe depends mostly on the
# first instruction of the function (see tests/progs/spin.c):
#   small       starts with a RIP-relative mov: single-stepped out of line (slow)
#   small_push  starts with push %rbp: emulated by the kernel (fast)
#
# Columns:
#   wall_ms        whole command, date +%s%N around it: includes attaching,
#                  detaching and (bpfprof) writing the JSON trace
#   wall_ns/call   wall time / N
#   loop_ns/call   spin's own timing of the call loop only (CLOCK_MONOTONIC)
#   ovh_ns/call    loop_ns/call minus the untraced loop_ns/call
#   vs_bpftrace    ovh_ns/call / bpftrace's ovh_ns/call (< 1: bpfprof is cheaper)
#   calls          X events in bpfprof's trace, and its loss events; a tracer
#                  that drops records looks fast, so check this is N
#
# Builds nothing: expects ./bpfprof and tests/progs/spin (`make bench` builds them).
set -euo pipefail

cd "$(dirname "$0")/.."
. bench/lib.sh overhead.sh
N=${N:-2000000}
RUNS=${RUNS:-3}
FUNCS=${FUNCS:-small small_push}
SPIN=$PWD/tests/progs/spin
BPFPROF=${BPFPROF_BIN:-$PWD/bpfprof}

bench_need_root uprobes
bench_need_built "$BPFPROF" make
bench_need_built "$SPIN" "make progs"
have_bpftrace=1
command -v bpftrace >/dev/null || { have_bpftrace=0; echo "overhead.sh: bpftrace not found, skipping it" >&2; }

bench_tmp bpfprof-bench

# run_one TOOL FUNC: one run; appends "wall_ns loop_ns_per_call" to $tmp/TOOL.FUNC
run_one() {
	local tool=$1 func=$2 t0 t1 rc=0 out=$tmp/out err=$tmp/err
	t0=$(date +%s%N)
	case $tool in
	untraced)
		"$SPIN" "$N" "$func" >"$out" 2>"$err" || rc=$? ;;
	bpfprof)
		rm -f "$tmp/bench.json"
		"$BPFPROF" record -q -o "$tmp/bench.json" -F "$func" -- "$SPIN" "$N" "$func" \
			>"$out" 2>"$err" || rc=$? ;;
	bpftrace)
		bpftrace -q -e "uprobe:$SPIN:$func {} uretprobe:$SPIN:$func {}" \
			-c "$SPIN $N $func" >"$out" 2>"$err" || rc=$? ;;
	esac
	t1=$(date +%s%N)
	if [ $rc != 0 ]; then
		echo "overhead.sh: $tool $func failed (exit $rc):" >&2
		tail -5 "$err" >&2
		return 1
	fi
	local loop
	loop=$(sed -n 's/^spin: .*ns_per_call=\([0-9.]*\).*/\1/p' "$out" | tail -1)
	[ -n "$loop" ] || { echo "overhead.sh: $tool $func: no spin line in output" >&2; return 1; }
	echo "$((t1 - t0)) $loop" >>"$tmp/$tool.$func"
	if [ "$tool" = bpfprof ]; then
		# calls and loss events in the trace (first run only: the file is big)
		if [ ! -e "$tmp/calls.$func" ]; then
			local x l
			x=$(grep -o '"ph": *"X"' "$tmp/bench.json" | wc -l)
			l=$(grep -o '"cat": *"loss"' "$tmp/bench.json" | wc -l)
			echo "$x/$l" >"$tmp/calls.$func"
		fi
		rm -f "$tmp/bench.json"
	fi
}

tools="untraced bpfprof"
[ $have_bpftrace = 1 ] && tools="$tools bpftrace"

echo "spin: N=$N calls, $RUNS runs each, medians; $(uname -r), $(nproc) CPUs"
for func in $FUNCS; do
	for tool in $tools; do
		for _ in $(seq "$RUNS"); do
			run_one "$tool" "$func" || exit 1
		done
	done
done

printf '\n%-11s %-9s %10s %13s %13s %12s %12s %s\n' func tool wall_ms wall_ns/call loop_ns/call \
	ovh_ns/call vs_bpftrace calls/lost
for func in $FUNCS; do
	base=$(awk '{ print $2 }' "$tmp/untraced.$func" | median)
	bt=""
	if [ $have_bpftrace = 1 ]; then
		bt=$(awk '{ print $2 }' "$tmp/bpftrace.$func" | median)
		bt=$(awk -v a="$bt" -v b="$base" 'BEGIN { print a - b }')
	fi
	for tool in $tools; do
		wall=$(awk '{ print $1 }' "$tmp/$tool.$func" | median)
		loop=$(awk '{ print $2 }' "$tmp/$tool.$func" | median)
		calls="-"
		[ "$tool" = bpfprof ] && calls=$(cat "$tmp/calls.$func")
		awk -v f="$func" -v t="$tool" -v w="$wall" -v l="$loop" -v b="$base" -v bt="$bt" \
			-v n="$N" -v c="$calls" 'BEGIN {
			ovh = l - b
			if (t == "untraced") { o = "-"; r = "-" }
			else {
				o = sprintf("%.1f", ovh)
				r = (bt != "" && bt > 0) ? sprintf("%.2f", ovh / bt) : "-"
			}
			printf "%-11s %-9s %10.1f %13.1f %13.2f %12s %12s %s\n",
				f, t, w / 1e6, w / n, l, o, r, c
		}'
	done
done
