#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# diff's false alarms and power on a loaded machine (README, "diff"):
# tests/progs/dprog recorded 16 times alike and 3 times with work_3 given 10%
# more work, beside a CPU hog (yes >/dev/null); then 8 pairs of identical
# recordings one a side, 3 identical runs against 3, and the regression one a
# side and three a side.  Prints the functions flagged per comparison.
# Usage (root): bench/diff_noise.sh [OUTDIR]   (needs make bpfprof progs)
set -e
cd "$(dirname "$0")/.."
B=$PWD/bpfprof
P=$PWD/tests/progs/dprog
D=${1:-$(mktemp -d)}
mkdir -p "$D"
yes >/dev/null &
HOG=$!
trap 'kill $HOG 2>/dev/null' EXIT
uptime
for i in $(seq 1 16); do
	$B record -q -o "$D/s$i.bpfprof" -F 'work_*' -- "$P" 300
done
for i in 1 2 3; do
	$B record -q -o "$D/r$i.bpfprof" -F 'work_*' -- "$P" 300 20000 40000 60000 88000
done
uptime
kill $HOG
flagged() {
	$B diff --format json "$@" | python3 -c 'import json, sys
d = json.load(sys.stdin)
print("run shift %s:" % d.get("run_shift"), [(f["function"], f["status"], round(f["shift_ratio"], 3))
      for f in d["functions"] if f["status"] != "same"])'
}
for i in $(seq 1 2 15); do
	echo -n "identical s$i s$((i + 1)): "
	flagged "$D/s$i.bpfprof" "$D/s$((i + 1)).bpfprof"
done
for t in "1 3 5 2 4 6" "7 9 11 8 10 12" "13 14 15 16 2 4"; do
	set -- $t
	echo -n "identical 3+3 ($t): "
	flagged "$D/s$1.bpfprof" "$D/s$2.bpfprof" "$D/s$3.bpfprof" -- \
		"$D/s$4.bpfprof" "$D/s$5.bpfprof" "$D/s$6.bpfprof"
done
for i in 1 2 3; do
	echo -n "work_3 +10% s$((i * 2)) r$i: "
	flagged "$D/s$((i * 2)).bpfprof" "$D/r$i.bpfprof"
done
for b in "1 3 5" "7 9 11"; do
	set -- $b
	echo -n "work_3 +10% 3+3 (s$1 s$2 s$3): "
	flagged "$D/s$1.bpfprof" "$D/s$2.bpfprof" "$D/s$3.bpfprof" -- \
		"$D/r1.bpfprof" "$D/r2.bpfprof" "$D/r3.bpfprof"
done
