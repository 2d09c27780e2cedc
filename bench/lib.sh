# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# What the benchmark scripts share; sourced (`. bench/lib.sh NAME`) from the
# repository root, after `set -euo pipefail`.  NAME is the script's name in
# its messages.

BENCH_NAME=$1

die() { echo "$BENCH_NAME: $*" >&2; exit 1; }

# bench_need_root WHY: the figures need root (uprobes, perf events)
bench_need_root() { [ "$(id -u)" = 0 ] || die "must run as root ($1)"; }

# bench_need_built FILE HOW: an executable built by `HOW`
bench_need_built() { [ -x "$1" ] || die "$1 not built: run $2"; }

# bench_tmp PREFIX: a private directory in $tmp, removed on exit
bench_tmp() {
	tmp=$(mktemp -d "/tmp/$1.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
}

# numbers on stdin, one a line -> their median ("nan" when there are none)
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
