#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# What following the sampled processes' mappings costs everyone else.
# With --sample or --offcpu, bpfprof follows them at their exec and at
# their dynamic linker's _dl_debug_state (bpf/sample.bpf.c: mmap_exec,
# mmap_dl), which other processes do not reach; on kernels without the
# VMA iterator (before 6.7), its sys_exit program (mmap_exit) runs at the
# end of every system call on the machine instead.  This times a
# process that is NOT traced and makes one system call after another (dd,
# 1-byte blocks: a read and a write per byte) alone, and while bpfprof
# samples another process (sleep), interleaved, RUNS times each.
#
#   sudo bench/mmaps.sh                 # from the repo root, after `make`
#   BYTES=2000000 RUNS=9 sudo -E bench/mmaps.sh
#
# Prints each configuration's median seconds and its ratio to the alone
# run.  "sampling" includes what sampling itself costs the machine (a
# cpu-clock program on every CPU); "offcpu" a sched_switch program on
# every context switch.  BPFPROF_OLD=path adds the same two for another
# build (e.g. one that follows the mappings at sys_exit) for the difference.
set -euo pipefail

cd "$(dirname "$0")/.."
. bench/lib.sh mmaps.sh
BYTES=${BYTES:-1000000}
RUNS=${RUNS:-7}
BPFPROF=${BPFPROF_BIN:-$PWD/bpfprof}

bench_need_root "perf events, BPF"
bench_need_built "$BPFPROF" make
[ -z "${BPFPROF_OLD:-}" ] || bench_need_built "$BPFPROF_OLD" "a build of bpfprof"
bench_tmp bpfprof-mmaps

# dd_s: seconds of one dd run
dd_s() {
	local s e
	s=$(date +%s.%N)
	dd if=/dev/zero of=/dev/null bs=1 count="$BYTES" 2>/dev/null
	e=$(date +%s.%N)
	echo "$e - $s" | bc
}

# beside BIN OPT NAME: dd while BIN records OPT on a sleep; the seconds go to $tmp/NAME
beside() {
	local p
	"$1" record "$2" -o "$tmp/out.json" -- sleep 600 >/dev/null 2>"$tmp/err" &
	p=$!
	# attached when it says so (its first line after start-up)
	for _ in $(seq 100); do grep -q "sampling" "$tmp/err" && break; sleep 0.1; done
	dd_s >> "$tmp/$3"
	kill -INT $p
	wait $p || true
}

CONFIGS="alone sampling offcpu"
[ -z "${BPFPROF_OLD:-}" ] || CONFIGS="$CONFIGS old-sampling old-offcpu"
for _ in $(seq "$RUNS"); do
	dd_s >> "$tmp/alone"
	beside "$BPFPROF" --sample sampling
	beside "$BPFPROF" --offcpu offcpu
	if [ -n "${BPFPROF_OLD:-}" ]; then
		beside "$BPFPROF_OLD" --sample old-sampling
		beside "$BPFPROF_OLD" --offcpu old-offcpu
	fi
done
base=$(median < "$tmp/alone")
printf "%-14s %10s %8s\n" config median_s x_alone
for c in $CONFIGS; do
	m=$(median < "$tmp/$c")
	printf "%-14s %10.3f %8.3f\n" "$c" "$m" "$(echo "$m / $base" | bc -l)"
done
