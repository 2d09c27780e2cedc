#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The cost of --args (typed from DWARF, with a `char *` read as a string at
# every call) against the same recording without --args, in one run:
# farm-bench alternates the two commands and takes the ratio pair by pair.
# tests/progs/argtypes N calls t_str (one string argument) and t_int N times
# each; both are traced, so the difference is 2 N calls' worth of probe cost.
#
#   sudo bench/args_cost.sh                # from the repo root, after `make`
#   N=200000 RUNS=7 sudo -E bench/args_cost.sh
#
# Prints farm-bench's table (median wall and cpu of each command, and the
# ratio A/B), then a second run of the plain recording against the untraced
# program, so that the --args surplus can be put per call:
#   per-call surplus = (cpu_args - cpu_plain) / (2 N)
#
# Then the doubles: tests/progs/argdouble N calls d_half N times (an -O0
# build, where the double argument and return are in memory or rax): --args
# reads them with two more probes inside the function (after the prologue,
# before the `ret`: symbols/dwarfxmm.c).  --args on d_half against no
# --args, and against --args on i_half, its twin in integers called as
# often: what reading the doubles adds to --args.
# Builds nothing: expects ./bpfprof, tests/progs/argtypes and argdouble.
set -euo pipefail

cd "$(dirname "$0")/.."
N=${N:-100000}
RUNS=${RUNS:-5}
BPFPROF=${BPFPROF_BIN:-$PWD/bpfprof}
PROG=$PWD/tests/progs/argtypes
PROG2=$PWD/tests/progs/argdouble
OUT=$(mktemp -d /tmp/bpfprof-args-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

[ "$(id -u)" = 0 ] || { echo "args_cost.sh: run as root (BPF)" >&2; exit 1; }
[ -x "$BPFPROF" ] && [ -x "$PROG" ] && [ -x "$PROG2" ] || { echo "args_cost.sh: run make first" >&2; exit 1; }

# pair TITLE B_COMMAND A_COMMAND...: farm-bench's table of A against B, in turn
pair() {
	local title=$1 vs=$2

	shift 2
	echo "== A: $title"
	farm-bench -n "$RUNS" --timeout 600 --vs "$vs" -- "$@"
	echo
}

SEL=(-q -F t_str -F t_int)
pair "record --args (typed, strings read)  vs  B: record (no --args); $((2 * N)) traced calls" \
	"$BPFPROF record ${SEL[*]} -o $OUT/b.bpfprof -- $PROG $N" \
	"$BPFPROF" record "${SEL[@]}" --args -o "$OUT/a.bpfprof" -- "$PROG" "$N"
pair "record (no --args)  vs  B: the program untraced" "$PROG $N" \
	"$BPFPROF" record "${SEL[@]}" -o "$OUT/b.bpfprof" -- "$PROG" "$N"
SEL=(-q -F d_half)
pair "record --args (double argument and return read inside)  vs  B: record (no --args); $N traced calls" \
	"$BPFPROF record ${SEL[*]} -o $OUT/b.bpfprof -- $PROG2 $N" \
	"$BPFPROF" record "${SEL[@]}" --args -o "$OUT/a.bpfprof" -- "$PROG2" "$N"
pair "record --args on d_half (doubles)  vs  B: record --args on i_half (integers); $N calls each" \
	"$BPFPROF record -q -F i_half --args -o $OUT/b.bpfprof -- $PROG2 $N" \
	"$BPFPROF" record "${SEL[@]}" --args -o "$OUT/a.bpfprof" -- "$PROG2" "$N"
