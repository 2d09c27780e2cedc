#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Does bpfprof end when its work is done, under load?  (issue 26)
#
#   bench/teardown.sh [--idle] [RUNS]        (root; after `make bench`)
#
# Under load (unless --idle): two CPU hogs (yes >/dev/null) and another
# bpfprof recording a busy program (tests/progs/busy: main never returns and
# calls tick every millisecond, so a return probe of its is always pending:
# the worst case for the uprobes' grace periods, which every uprobe user on
# the machine shares).  RUNS times (default 10), each of:
#
#   record   bpfprof record -F 'fn_*' -- many (10,000 functions): attach time,
#            the workload's end -> bpfprof's exit, links and grace periods,
#            and how long bpfprof-release took to remove the probes after it;
#            beside the floor loader (bench/floor.c: attach, end -> exit,
#            and the detach alone, done in its own process; a floor still
#            running FLOOR_WAIT_S (20) s after its start is counted apart:
#            it removes its links itself, as long as the load lets it)
#   serve    bpfprof serve --pid BUSY, SIGTERM -> exit
#   kill     bpfprof record -- sh -c 'exitcode in a loop', SIGKILLed while a
#            process waits at its exec: kill -> that process continued
#
# Each end must come within 1 s (GOAL_MS); the last lines say how many runs
# did.  Figures are wall-clock ms on this machine, medians and maxima.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh teardown

LOAD=1
if [ "${1:-}" = --idle ]; then
	LOAD=0
	shift
fi
RUNS=${1:-10}
GOAL_MS=${GOAL_MS:-1000}
FLOOR_WAIT_S=${FLOOR_WAIT_S:-20}
OUT=.output/bench

bench_need_root uprobes
for f in bpfprof $OUT/floor $OUT/many tests/progs/busy tests/progs/exitcode; do
	bench_need_built "$f" "'make bench'"
done
bench_tmp bpfprof-teardown
T=$tmp
cp bpfprof $OUT/floor $OUT/many tests/progs/busy tests/progs/exitcode "$T/"
BPFPROF=$T/bpfprof
export BPFPROF_RELEASE_LOG=$T/release.log
: >"$BPFPROF_RELEASE_LOG"

now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }
progress() { printf '  %-60s\r' "$*" >&2; }

# the state letter of a process ("" once gone)
state() { sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null || true; }

pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

load_pids=()
if [ $LOAD = 1 ]; then
	yes >/dev/null &
	load_pids+=($!)
	yes >/dev/null &
	load_pids+=($!)
	# another bpfprof, tracing a busy program: its own SRCU readers stay pending
	setsid "$BPFPROF" record -o "$T/load.bpfprof" -- "$T/busy" 0 teardown-load \
		>/dev/null 2>"$T/load.err" &
	load_bp=$!
	load_pids+=($load_bp)
	pids+=("${load_pids[@]}")
	sleep 2
	# its busy too: a SIGKILLed bpfprof leaves its target running, traced
	pids+=($(cat "/proc/$load_bp/task/$load_bp/children" 2>/dev/null || true))
fi

for r in $(seq "$RUNS"); do
	# --- record, 10k functions
	progress "record 10k functions ($r/$RUNS)"
	t0=$(now)
	"$BPFPROF" record -v -F 'fn_*' -o "$T/m.bpfprof" -- "$T/many" >"$T/o" 2>"$T/e" ||
		echo "run $r: record failed: $(tail -1 "$T/e")" >&2
	t1=$(now)
	end=$(sed -n 's/many: end_ns=//p' "$T/o")
	echo $(((t1 - end) / 1000000)) >>"$T/rec.exit"
	sed -n 's/.*(attached in \([0-9.]*\) \([a-z]*\)).*/\1 \2/p' "$T/e" |
		awk '{ print $1 * ($2 == "s" ? 1000 : $2 == "ms" ? 1 : 0.001) }' >>"$T/rec.attach"
	sed -n 's/.*links: \([0-9]*\) made over the run; \([0-9]*\) uprobe links .* and \([0-9]*\) others.*/\1 \2 \3/p' \
		"$T/e" >>"$T/rec.links"

	progress "floor 10k functions ($r/$RUNS)"
	# the floor removes its links itself: under the load it can wait as
	# long as busy holds the grace periods off; it is not waited for past
	# FLOOR_WAIT_S (counted, and left to end alone)
	"$T/floor" -t "$T/many" 'fn_*' -- "$T/many" >"$T/fo.$r" 2>"$T/fe.$r" &
	fl=$!
	pids+=($fl)
	t0=$(now)
	while [ -e "/proc/$fl" ] && [ "$(state "$fl")" != Z ] &&
		[ $(ms "$t0" "$(now)") -lt $((FLOOR_WAIT_S * 1000)) ]; do
		sleep 0.01
	done
	if [ -e "/proc/$fl" ] && [ "$(state "$fl")" != Z ]; then
		echo "$r" >>"$T/floor.stuck"
	else
		wait "$fl" || true
		t1=$(now)
		end=$(sed -n 's/many: end_ns=//p' "$T/fo.$r")
		echo $(((t1 - end) / 1000000)) >>"$T/floor.exit"
		sed -n 's/.* detach_ns=\([0-9]*\).*/\1/p' "$T/fe.$r" | awk '{ print $1 / 1e6 }' >>"$T/floor.detach"
	fi
	sed -n 's/.* attach_ns=\([0-9]*\).*/\1/p' "$T/fe.$r" | awk '{ print $1 / 1e6 }' >>"$T/floor.attach"

	# --- serve, SIGTERM
	progress "serve, SIGTERM ($r/$RUNS)"
	"$T/busy" 0 teardown-serve >/dev/null &
	busy=$!
	pids+=($busy)
	setsid "$BPFPROF" serve --pid "$busy" -l 127.0.0.1:0 >/dev/null 2>"$T/se" &
	sv=$!
	pids+=($sv)
	for i in $(seq 600); do
		grep -q 'serving' "$T/se" && break
		sleep 0.05
	done
	t0=$(now)
	kill -TERM "$sv"
	wait "$sv" || true
	t1=$(now)
	ms "$t0" "$t1" >>"$T/serve.exit"
	kill -KILL "$busy" 2>/dev/null || true
	wait "$busy" 2>/dev/null || true

	# --- SIGKILL while a process waits at its exec
	progress "SIGKILL during an exec hold ($r/$RUNS)"
	# the script's first exec of a new image (exitcode) once bpfprof is stopped: held
	rm -f "$T/go"
	setsid "$BPFPROF" record -o "$T/k.json" -- /bin/sh -c \
		"echo ready; while [ ! -e $T/go ]; do sleep 0.01; done; $T/exitcode; $T/exitcode" \
		>"$T/ko" 2>/dev/null &
	kb=$!
	pids+=($kb)
	for i in $(seq 600); do
		grep -q ready "$T/ko" && break
		sleep 0.05
	done
	# the shell: bpfprof's other children (guard, bpfprof-release) may come first
	sh=""
	for c in $(cat "/proc/$kb/task/$kb/children"); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = sh ] && sh=$c && break
	done
	kill -STOP "$kb"
	touch "$T/go"
	held=""
	for i in $(seq 6000); do
		for c in $(cat "/proc/$sh/task/$sh/children" 2>/dev/null); do
			[ "$(state "$c")" = T ] && held=$c && break
		done
		[ -n "$held" ] && break
		sleep 0.01
	done
	t0=$(now)
	kill -KILL "$kb"
	while [ -n "$held" ] && [ "$(state "$held")" = T ]; do
		[ $(ms "$t0" "$(now)") -gt 120000 ] && break
		sleep 0.005
	done
	t1=$(now)
	if [ -n "$held" ]; then
		ms "$t0" "$t1" >>"$T/kill.continue"
	else
		echo "run $r: no process held at its exec" >&2
	fi
	kill -KILL "$sh" 2>/dev/null || true
	wait "$kb" 2>/dev/null || true	# "Killed": the shell's report of the SIGKILL above
done
printf '%-70s\r' "" >&2

# bpfprof-release of the record runs: each appends a line once done
if [ $LOAD = 1 ]; then
	kill -INT "$load_bp" 2>/dev/null || true
	wait "$load_bp" 2>/dev/null || true
	kill -KILL "${load_pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
fi
for i in $(seq 1200); do
	[ "$(wc -l <"$BPFPROF_RELEASE_LOG")" -ge "$RUNS" ] && break
	sleep 0.1
done
sed -n 's/.* removed in \([0-9]*\) ms/\1/p' "$BPFPROF_RELEASE_LOG" >"$T/rec.release"

stat_row() {	# LABEL FILE [GOAL_MS]: median and max, ms (and how many under the goal)
	sort -g "$2" | awk -v l="$1" -v goal="${3:-}" '
	{ v[NR] = $1 }
	END {
		if (!NR) { printf "  %-44s %9s\n", l, "-"; exit }
		n = NR
		med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		ok = 0
		for (i = 1; i <= n; i++) ok += v[i] < goal
		printf "  %-44s %9.1f %9.1f", l, med, v[n]
		if (goal != "") printf "   %d of %d under %d ms", ok, n, goal
		printf "\n"
	}'
}

echo "bpfprof teardown  $(date -u +%Y-%m-%dT%H:%MZ)  kernel $(uname -r), $(nproc) CPUs, $RUNS runs," \
	"$([ $LOAD = 1 ] && echo 'under load: 2 CPU hogs + bpfprof record -- busy' || echo idle)," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %-44s %9s %9s\n' "" median max
stat_row "10k functions: floor attach" "$T/floor.attach"
stat_row "10k functions: bpfprof attach" "$T/rec.attach"
stat_row "10k functions: floor end -> exit" "$T/floor.exit"
stat_row "  (floor: its detach alone, in that)" "$T/floor.detach"
[ -s "$T/floor.stuck" ] && printf '  %-44s %d of %d runs (not counted above)\n' \
	"  floor still running ${FLOOR_WAIT_S} s after its start" "$(wc -l <"$T/floor.stuck")" "$RUNS"
stat_row "10k functions: bpfprof end -> exit" "$T/rec.exit" "$GOAL_MS"
stat_row "  bpfprof-release: probes removed after, in" "$T/rec.release"
awk '{ m += $1; u += $2; o += $3 } END { if (NR) printf "  %-44s %9.1f uprobe links (grace periods, overlapped), %.1f others; %.1f made\n", "10k functions: links a run", u / NR, o / NR, m / NR }' "$T/rec.links"
stat_row "serve: SIGTERM -> exit" "$T/serve.exit" "$GOAL_MS"
stat_row "SIGKILL -> the process held at exec continued" "$T/kill.continue" "$GOAL_MS"
