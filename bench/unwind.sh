#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# DWARF stack sampling: bpfprof --sample=999 --stack=dwarf against
# perf record -F 999 --call-graph dwarf on the same workload, in one run.
# tests/progs/nofp (built -O2 -fomit-frame-pointer; spins in its own code,
# in libc's qsort with a callback, in libc's memcpy) does ROUNDS rounds of
# fixed work and prints how long they took; each configuration runs RUNS
# times, interleaved, and the table shows medians.
#
#   sudo bench/unwind.sh              # from the repo root, after `make`
#   ROUNDS=300 RUNS=7 sudo -E bench/unwind.sh
#
# Columns:
#   work_ms     nofp's own timing of its rounds (CLOCK_MONOTONIC)
#   x_untraced  work_ms / the untraced work_ms: the slowdown of the target
#   wall_ms     the whole command (tool start-up, attach, writing its output)
#   cpu_ms      CPU time (user + system) of the whole command: the tool and
#               the target (getrusage of the children)
#   x_cpu       cpu_ms / the untraced cpu_ms: what recording costs the machine
#   post_ms     perf: CPU time of `perf script` (where perf unwinds); bpfprof
#               unwinds while it records (in cpu_ms), so it has none
#   samples     samples of the nofp process (median)
#   main%       share of those samples whose stack reaches main(): bpfprof,
#               not truncated and holding main; perf, holding main
#   out_kb      bpfprof's archive / perf.data
#
# Builds nothing: expects ./bpfprof and tests/progs/nofp; needs perf (linux-perf).
set -euo pipefail

cd "$(dirname "$0")/.."
. bench/lib.sh unwind.sh
ROUNDS=${ROUNDS:-150}
RUNS=${RUNS:-5}
NOFP=$PWD/tests/progs/nofp
BPFPROF=${BPFPROF_BIN:-$PWD/bpfprof}

bench_need_root "perf events, BPF"
bench_need_built "$BPFPROF" make
bench_need_built "$NOFP" "make progs"
command -v perf >/dev/null || die "perf not found (apt-get install linux-perf)"

bench_tmp bpfprof-unwind

CONFIGS="untraced bpfprof-dwarf perf-dwarf perf-dwarf16k bpfprof-fp"

# cpu FILE CMD...: runs CMD, writes the CPU ms it and its descendants used to FILE
cpu() {
	python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%d\n" % ((r.ru_utime + r.ru_stime) * 1000))
sys.exit(rc)' "$@"
}

# run_one CONFIG: appends "work_ms wall_ms cpu_ms post_ms samples main_pct out_kb" to $tmp/CONFIG
run_one() {
	local c=$1 t0 t1 out=$tmp/out err=$tmp/err post=0 stats="0 0" kb=0
	rm -f "$tmp/rec.bpfprof" "$tmp/perf.data"
	t0=$(date +%s%N)
	case $c in
	untraced)
		cpu "$tmp/cpu" "$NOFP" "$ROUNDS" >"$out" 2>"$err" ;;
	bpfprof-dwarf | bpfprof-fp)
		cpu "$tmp/cpu" "$BPFPROF" record -q --sample=999 --stack="${c#bpfprof-}" \
			-o "$tmp/rec.bpfprof" -- "$NOFP" "$ROUNDS" >"$out" 2>"$err" ;;
	perf-dwarf)
		cpu "$tmp/cpu" perf record -q -F 999 -e cpu-clock --call-graph dwarf \
			-o "$tmp/perf.data" -- "$NOFP" "$ROUNDS" >"$out" 2>"$err" ;;
	perf-dwarf16k)
		cpu "$tmp/cpu" perf record -q -F 999 -e cpu-clock --call-graph dwarf,16384 \
			-o "$tmp/perf.data" -- "$NOFP" "$ROUNDS" >"$out" 2>"$err" ;;
	esac
	t1=$(date +%s%N)
	case $c in
	bpfprof-*)
		"$BPFPROF" convert --format chrome -o "$tmp/rec.json" "$tmp/rec.bpfprof" 2>/dev/null
		stats=$(python3 - "$tmp/rec.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
names = {e["pid"]: e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "process_name"}
ss = [e for e in t["traceEvents"] if e.get("cat") == "sample" and names.get(e["pid"]) == "nofp"]
ok = [e for e in ss if not e["args"].get("truncated") and "main" in e["args"]["stack"]]
print(len(ss), "%.1f" % (100.0 * len(ok) / max(1, len(ss))))
EOF
)
		kb=$(( $(stat -c %s "$tmp/rec.bpfprof") / 1024 )) ;;
	perf-*)
		cpu "$tmp/post" perf script -i "$tmp/perf.data" -F comm,tid,ip,sym,dso \
			>"$tmp/script" 2>/dev/null
		post=$(cat "$tmp/post")
		stats=$(python3 - "$tmp/script" <<'EOF'
import sys
n = ok = 0
cur = None
for line in open(sys.argv[1], errors="replace"):
    if not line.strip():
        if cur is not None:
            n += 1
            ok += "main" in cur
        cur = None
    elif not line[0].isspace():
        cur = [] if line.split()[0] == "nofp" else None
    elif cur is not None:
        p = line.split(None, 2)
        if len(p) > 1:
            cur.append(p[1].split("+0x")[0])
if cur is not None:
    n += 1
    ok += "main" in cur
print(n, "%.1f" % (100.0 * ok / max(1, n)))
EOF
)
		kb=$(( $(stat -c %s "$tmp/perf.data") / 1024 )) ;;
	esac
	local work
	work=$(sed -n 's/.*rounds took \([0-9.]*\) ms.*/\1/p' "$out")
	[ -n "$work" ] || { cat "$err" >&2; die "$c: no timing from nofp"; }
	echo "$work $(( (t1 - t0) / 1000000 )) $(cat "$tmp/cpu") $post $stats $kb" >>"$tmp/$c"
}

col() { awk -v k="$2" '{ print $k }' "$tmp/$1" | median; }

echo "unwind.sh: nofp $ROUNDS rounds, $RUNS runs each, $(nproc) CPUs, $(uname -r), $(perf --version)"
for ((i = 0; i < RUNS; i++)); do
	for c in $CONFIGS; do
		run_one "$c"
	done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
base=$(col untraced 1)
cbase=$(col untraced 3)
printf "%-14s %8s %10s %8s %7s %6s %8s %8s %6s %8s\n" config work_ms x_untraced wall_ms \
	cpu_ms x_cpu post_ms samples main% out_kb
for c in $CONFIGS; do
	w=$(col "$c" 1)
	printf "%-14s %8.1f %10s %8s %7s %6s %8s %8s %6s %8s\n" "$c" "$w" "$(ratio "$w" "$base")" \
		"$(col "$c" 2)" "$(col "$c" 3)" "$(ratio "$(col "$c" 3)" "$cbase")" "$(col "$c" 4)" \
		"$(col "$c" 5)" "$(col "$c" 6)" "$(col "$c" 7)"
done
