#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The cost of --args on a function with a double argument and a double
# return value, which --args reads with two more probes inside the function
# (after the prologue, before the `ret`: symbols/dwarfxmm.c), against the
# same recording without --args, in one run: farm-bench alternates the two
# commands and takes the ratio pair by pair.  tests/progs/argdouble N calls
# d_half N times (an -O0 build, where the double is in memory/rax there).
#
#   sudo bench/args_double.sh               # from the repo root, after `make`
#   N=200000 RUNS=7 sudo -E bench/args_double.sh
#
# Prints farm-bench's tables: --args vs no --args, then no --args vs the
# untraced program, so that the --args surplus can be put per call:
#   per-call surplus = (cpu_args - cpu_plain) / N
# then --args on d_half against --args on i_half, its twin in integers
# (called as often): what reading the doubles adds to --args.
# Builds nothing: expects ./bpfprof and tests/progs/argdouble.
set -euo pipefail

cd "$(dirname "$0")/.."
N=${N:-100000}
RUNS=${RUNS:-5}
BPFPROF=${BPFPROF_BIN:-$PWD/bpfprof}
PROG=$PWD/tests/progs/argdouble
OUT=$(mktemp -d /tmp/bpfprof-argd-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

[ "$(id -u)" = 0 ] || { echo "args_double.sh: run as root (BPF)" >&2; exit 1; }
[ -x "$BPFPROF" ] && [ -x "$PROG" ] || { echo "args_double.sh: run make first" >&2; exit 1; }

SEL=(-q -F d_half)
echo "== A: record --args (double argument and return read inside)  vs  B: record (no --args); $N traced calls"
farm-bench -n "$RUNS" --timeout 600 \
	--vs "$BPFPROF record ${SEL[*]} -o $OUT/b.bpfprof -- $PROG $N" -- \
	"$BPFPROF" record "${SEL[@]}" --args -o "$OUT/a.bpfprof" -- "$PROG" "$N"
echo
echo "== A: record (no --args)  vs  B: the program untraced"
farm-bench -n "$RUNS" --timeout 600 --vs "$PROG $N" -- \
	"$BPFPROF" record "${SEL[@]}" -o "$OUT/b.bpfprof" -- "$PROG" "$N"
echo
echo "== A: record --args on d_half (doubles)  vs  B: record --args on i_half (integers); $N calls each"
farm-bench -n "$RUNS" --timeout 600 \
	--vs "$BPFPROF record -q -F i_half --args -o $OUT/b.bpfprof -- $PROG $N" -- \
	"$BPFPROF" record "${SEL[@]}" --args -o "$OUT/a.bpfprof" -- "$PROG" "$N"
