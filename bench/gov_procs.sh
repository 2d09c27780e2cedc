#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The overhead governor over every process of a recording and over Python
# calls (`bash bench/gov_procs.sh`, as root, from the repository root; gcc,
# make and Debian's python3.11 installed):
#   - `record --max-overhead 100 -- make -j2` of a generated C project of
#     NFILES files (every function of make, gcc, cc1, as, ld traced);
#   - `record --max-overhead 100 -- python3.11 tests/progs/py/hot.py NCALLS`
#     (a one-line function called NCALLS times).
# Each traced run beside an untraced one, in the same run, for each binary
# of BINS (e.g. BINS="/path/to/main/bpfprof ./bpfprof": before and after);
# prints the wall times and their ratio traced / untraced, and the functions
# the governor dropped (per file) from the archive.
#
#   NFILES=40 NCALLS=1000000 BINS=./bpfprof TIMEOUT=600 CASES="make python"
#
# A traced run cut by TIMEOUT leaves its links to bpfprof-release and the
# closers, whose removal waits for grace periods: the probes of cc1 and
# gcc then stay for minutes and the next untraced make runs slowly (seen:
# 20 min for an untraced make of 40 files).  Measure one binary per
# invocation, and wait for `bpftool link show` to list no cc1 link between.
# (That was the closer's queue, 32 closes at once: a binary from before
# 2026-11-27 as one of BINS can leave thousands of cc1 links trapping every
# compiler on the machine for hours.  The closer now closes every link at
# once: they go within seconds of the run's end.)  With bpfprof -v, the
# re-links' cost: "governor: N drops re-linked G groups (K kept functions
# re-registered) in S s" (the make case runs with -v: that line is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh gov_procs.sh

NFILES=${NFILES:-40}
NCALLS=${NCALLS:-1000000}
BINS=${BINS:-./bpfprof}
TIMEOUT=${TIMEOUT:-600}
CASES=${CASES:-"make python"}
PY=/usr/bin/python3.11

bench_need_root uprobes
bench_need_built bpfprof "'make'"
bench_tmp bpfprof-gov-procs

# A C project of NFILES files: each a struct, a static helper and a function, main calling all.
gen_project() {
	local d=$1 i
	mkdir -p "$d"
	for i in $(seq 1 "$NFILES"); do
		cat > "$d/f$i.c" <<EOC
#include <stdio.h>
#include <string.h>
struct s$i { int a, b; char name[32]; };
static int helper$i(struct s$i *s, int k) { for (int j = 0; j < k; j++) s->a += j * $i; return s->a; }
int func$i(int x) { struct s$i s; memset(&s, 0, sizeof s); snprintf(s.name, sizeof s.name, "f%d", x); return helper$i(&s, x) + (int)strlen(s.name); }
EOC
	done
	{
		echo '#include <stdio.h>'
		for i in $(seq 1 "$NFILES"); do echo "int func$i(int);"; done
		echo 'int main(void) { int t = 0;'
		for i in $(seq 1 "$NFILES"); do echo " t += func$i($i);"; done
		echo ' printf("%d\n", t); return 0; }'
	} > "$d/main.c"
	{
		printf 'OBJS = main.o'; for i in $(seq 1 "$NFILES"); do printf ' f%d.o' "$i"; done; echo
		printf 'prog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n'
		printf '%%.o: %%.c\n\t$(CC) -O2 -c -o $@ $<\n'
		printf 'clean:\n\trm -f *.o prog\n'
	} > "$d/Makefile"
}

# secs CMD...: wall seconds of CMD (output to $tmp/last.*)
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" > "$tmp/last.out" 2> "$tmp/last.err" || echo "  (exit $?: $(tail -1 "$tmp/last.err"))" >&2
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

ratio() { echo "scale=2; $1 / $2" | bc -l; }

# dropped ARCHIVE: the dropped functions, counted per module
dropped() {
	"$1" report --format json "$2" 2>/dev/null | python3 -c '
import collections, json, sys
d = json.load(sys.stdin).get("dropped", [])
c = collections.Counter(x["module"] for x in d)
print("  dropped: %d functions (%s)" % (len(d), ", ".join("%s %d" % kv for kv in c.most_common(8))))' || true
}

run_case() {
	local bin=$1 name=$2 base trac
	shift 2
	case $name in
	make)
		make -s -C "$tmp/proj" clean
		base=$(secs make -s -C "$tmp/proj" -j2)
		make -s -C "$tmp/proj" clean
		trac=$(secs timeout "$TIMEOUT" "$bin" record -v --max-overhead 100 -o "$tmp/m.bpfprof" \
		       -- make -s -C "$tmp/proj" -j2)
		arch=$tmp/m.bpfprof ;;
	python)
		base=$(secs "$PY" tests/progs/py/hot.py "$NCALLS")
		trac=$(secs timeout "$TIMEOUT" "$bin" record --max-overhead 100 -o "$tmp/p.bpfprof" \
		       -- "$PY" tests/progs/py/hot.py "$NCALLS")
		arch=$tmp/p.bpfprof ;;
	esac
	printf '%-28s %-7s untraced %7.2f s  traced %8.2f s  ratio %7sx\n' "$bin" "$name" \
	       "$base" "$trac" "$(ratio "$trac" "$base")"
	grep -E "Python probes are detached|slower \(estimate|drops re-linked|attached in" "$tmp/last.err" |
		sed 's/^bpfprof: \(debug: \)\?//' | cut -c1-200 | sed 's/^/  /' || true
	dropped "$bin" "$arch"
}

gen_project "$tmp/proj"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); make -j2 of $NFILES files; hot.py $NCALLS calls"
for bin in $BINS; do
	for c in $CASES; do
		run_case "$bin" "$c"
	done
done
