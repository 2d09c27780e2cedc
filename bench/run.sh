#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# All benchmarks in one table (`make bench`, as root, from the repo root):
#
#   per traced call   for each kind of first instruction and prefix shape (.output/bench/insns,
#                     built from tests/progs/insns.c), and a tiny C function
#                     (bench/uftrace_spin.c, also built with -pg for uftrace):
#                     untraced ns/call, then ns added per call (entry + return)
#                     by the empty-probe floor (bench/floor), the floor plus a
#                     32-byte record per event (floor -m rb), bpfprof record,
#                     bpftrace with empty uprobe+uretprobe actions, uftrace
#   attach/detach     10,000 functions (bench/gen_many.sh), and
#                     `bpfprof record -- exitcode`, whole process
#   sustained         10 M calls of f_push as fast as one thread calls them,
#                     recorded with the defaults (16 MiB buffer): calls/s, losses
#   paths             the share of libc, python3.11 and bash functions whose entry
#                     probe the kernel emulates, now and before placement
#   python            CPython 3.11 (bench/pycalls.py): ns added per Python call in
#                     exact mode (N_PY calls of an empty function, record -F py:f) and
#                     the cost of --sample=99 / --sample=999 on a CPU-bound script
#                     (N_BURN rounds), each beside untraced runs of the same rounds
#   governor          tests/progs/hottiny (coarse() calling tiny() NTINY times, NCOARSE
#                     times, GOV_ARGS) untraced and under record --max-overhead LIMIT
#                     for each of GOV_LIMITS, side by side per round: the program's
#                     own CPU time (all threads, its probes' kernel time included)
#                     and elapsed time from its first call (start-up and attach
#                     excluded), ratio = traced / untraced
#   decoding          10 M records through decoder + Chrome exporter
#                     (bench/decode_bench) vs `uftrace dump --chrome` of a
#                     recording with the same number of records
#
# Per-call figures are the target thread's CPU time (bench/cputime.h), so
# other load on the machine does not inflate them; medians of RUNS runs.
# The table also goes to bench/results.txt.  Every binary is copied into a
# private directory first: uprobes belong to an inode, so probes other
# programs place on tests/progs/* (or a rebuild of ./bpfprof meanwhile)
# cannot disturb the figures.
#
#   RUNS=5 N_FAST=200000 N_SLOW=20000 NDEC=10000000 NUFT=5000000 NMANY_RUNS=5
#   NSUST=10000000 N_PY=100000 N_BURN=20000 GOV_ARGS="800 1000000" GOV_LIMITS="100 25"
#   SECTIONS="percall attach sustained python governor decode paths"   (a subset runs only those,
#   prints "-" for the others and leaves bench/results.txt alone)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh run.sh

RUNS=${RUNS:-5}
N_FAST=${N_FAST:-200000}	# calls per run, emulated probes (~1 us each)
N_SLOW=${N_SLOW:-20000}		# calls per run, single-stepped probes (~10 us each)
NDEC=${NDEC:-10000000}		# records through the decoder
NUFT=${NUFT:-5000000}		# calls in the uftrace recording that is dumped (2 records each)
NMANY_RUNS=${NMANY_RUNS:-5}	# runs of the attach/detach measurements
NSUST=${NSUST:-10000000}	# calls in the sustained-rate run
N_PY=${N_PY:-100000}		# Python calls per run (~10-15 us each traced on the slow VM)
N_BURN=${N_BURN:-20000}		# rounds of the CPU-bound Python script (~0.6 s)
GOV_ARGS=${GOV_ARGS:-"800 1000000"}	# hottiny NCOARSE NTINY: ~1.2 s of CPU untraced here
GOV_LIMITS=${GOV_LIMITS:-"100 25"}	# --max-overhead values
ALL_SECTIONS="percall attach sustained python governor decode paths"
SECTIONS=${SECTIONS:-$ALL_SECTIONS}
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
OUT=.output/bench
RESULTS=bench/results.txt

bench_need_root uprobes
for f in bpfprof $OUT/floor $OUT/decode_bench $OUT/insns $OUT/uftrace_spin $OUT/uftrace_spin_pg \
	$OUT/many tests/progs/exitcode tests/progs/hottiny; do
	bench_need_built "$f" "'make bench'"
done
have_bpftrace=0; command -v bpftrace >/dev/null && have_bpftrace=1
have_uftrace=0; command -v uftrace >/dev/null && have_uftrace=1
[ $have_bpftrace = 1 ] || echo "run.sh: bpftrace not found (scripts/setup.sh --bench): column left empty" >&2
[ $have_uftrace = 1 ] || echo "run.sh: uftrace not found (scripts/setup.sh --bench): column left empty" >&2

bench_tmp bpfprof-bench
cp bpfprof $OUT/floor $OUT/decode_bench $OUT/insns $OUT/uftrace_spin $OUT/uftrace_spin_pg \
	$OUT/many tests/progs/exitcode tests/progs/hottiny "$tmp/"
T=$tmp
BPFPROF=$T/bpfprof
FLOOR=$T/floor
notes=()

now() { date +%s%N; }
progress() { printf '  %-60s\r' "$*" >&2; }

# ns_per_call FILE: the target's own figure
ns_per_call() { sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p' "$1" | tail -1; }

# take_figures WHAT FIELD:FILE...: each FIELD=N figure of the run's output
# ($T/o) appended to $T/FILE; when one is missing, a note "WHAT failed" with
# the run's last error line, nothing appended, and false.
take_figures() {
	local what=$1 pair v vals=()
	shift
	for pair; do
		v=$(sed -n "s/.* ${pair%%:*}=\([0-9]*\).*/\1/p" "$T/o")
		if [ -z "$v" ]; then
			notes+=("$what failed: $(tail -1 "$T/e")")
			return 1
		fi
		vals+=("$v")
	done
	for pair; do
		echo "${vals[0]}" >>"$T/${pair#*:}"
		vals=("${vals[@]:1}")
	done
}

# bpfprof's "N calls recorded in ..., L lost records" -> "N L"
bp_counts() { sed -n 's/^bpfprof: \([0-9]*\) calls recorded in .*, \([0-9]*\) lost records.*/\1 \2/p' "$1"; }

# bpfprof's "attached in 61.9 ms" -> ms
bp_attach_ms() {
	sed -n 's/.*(attached in \([0-9.]*\) \([a-z]*\)).*/\1 \2/p' "$1" |
		awk '{ m = $2 == "s" ? 1000 : $2 == "ms" ? 1 : $2 == "us" ? 0.001 : 1e-6; print $1 * m }'
}

#
# 1. Per traced call.
#
# percall KEY FUNC N TARGET "ARGS" FLOORSPEC [BPFPROF_OPTS]
#   runs TARGET ARGS untraced and under each tool RUNS times; medians of the
#   ns_per_call the target prints go to $T/KEY.TOOL
percall() {
	local key=$1 func=$2 n=$3 target=$4 args=$5 fspec=$6 bopts=${7:-} r tool
	local tools="untraced floor floor_rec bpfprof"
	[ $have_bpftrace = 1 ] && tools="$tools bpftrace"
	for r in $(seq "$RUNS"); do
		for tool in $tools; do
			progress "per call: $key $tool ($r/$RUNS)"
			local o=$T/o e=$T/e rc=0
			case $tool in
			untraced) "$target" $args >"$o" 2>"$e" || rc=$? ;;
			floor) "$FLOOR" "$target" "$fspec" -- "$target" $args >"$o" 2>"$e" || rc=$? ;;
			floor_rec) "$FLOOR" -m rb "$target" "$fspec" -- "$target" $args >"$o" 2>"$e" || rc=$? ;;
			bpfprof)
				# the default output (an archive), as `record` writes it without -o
				"$BPFPROF" record $bopts -F "$func" -o "$T/x.bpfprof" -- "$target" $args \
					>"$o" 2>"$e" || rc=$?
				local c
				c=$(bp_counts "$e")
				[ "$c" = "$n 0" ] || notes+=("$key: bpfprof recorded '${c:-nothing}' (calls lost) instead of '$n 0'")
				;;
			bpftrace)
				bpftrace -q -e "uprobe:$target:$func {} uretprobe:$target:$func {}" \
					-c "$target $args" >"$o" 2>"$e" || rc=$? ;;
			esac
			local v
			v=$(ns_per_call "$o")
			if [ $rc != 0 ] || [ -z "$v" ]; then
				notes+=("$key: $tool failed (exit $rc): $(tail -1 "$e")")
				continue
			fi
			echo "$v" >>"$T/$key.$tool.all"
		done
	done
	for tool in $tools; do
		[ -e "$T/$key.$tool.all" ] && median <"$T/$key.$tool.all" >"$T/$key.$tool"
	done
	return 0
}

I=$T/insns
if want percall; then
percall push     f_push       $N_FAST "$I" "f_push $N_FAST"       f_push
percall nop      f_nop        $N_FAST "$I" "f_nop $N_FAST"        f_nop
percall nop5     f_nop5       $N_FAST "$I" "f_nop5 $N_FAST"       f_nop5
# bpfprof probes past endbr64 (on the push): so does its floor
percall endbr    f_endbr_push $N_FAST "$I" "f_endbr_push $N_FAST" f_endbr_push+4
percall endbr_ns f_endbr_push $N_SLOW "$I" "f_endbr_push $N_SLOW" f_endbr_push --no-skip-endbr
percall endbr_r  f_endbr_ret  $N_SLOW "$I" "f_endbr_ret $N_SLOW"  f_endbr_ret
percall riprel   f_riprel     $N_SLOW "$I" "f_riprel $N_SLOW"     f_riprel
percall sub      f_sub        $N_SLOW "$I" "f_sub $N_SLOW"        f_sub
# prefix shapes bpfprof moves the probe past (user/symbols/placement.c), and before that
percall movp     f_mov_push   $N_FAST "$I" "f_mov_push $N_FAST"   f_mov_push+6
percall movp_ns  f_mov_push   $N_SLOW "$I" "f_mov_push $N_SLOW"   f_mov_push --no-skip-endbr
percall xorp     f_xor_push   $N_FAST "$I" "f_xor_push $N_FAST"   f_xor_push+2
percall testje   f_test_je    $N_FAST "$I" "f_test_je $N_FAST"    f_test_je+3
percall tiny     tiny         $N_FAST "$T/uftrace_spin" "$N_FAST" tiny

# uftrace: the same tiny function, -pg build (mcount; no kernel entry)
if [ $have_uftrace = 1 ]; then
	for r in $(seq "$RUNS"); do
		progress "per call: tiny uftrace ($r/$RUNS)"
		rm -rf "$T/uft"
		if uftrace record -d "$T/uft" "$T/uftrace_spin_pg" "$N_FAST" >"$T/o" 2>"$T/e"; then
			ns_per_call "$T/o" >>"$T/tiny.uftrace.all"
		else
			notes+=("tiny: uftrace record failed: $(tail -1 "$T/e")")
		fi
	done
	[ -e "$T/tiny.uftrace.all" ] && median <"$T/tiny.uftrace.all" >"$T/tiny.uftrace"
	rm -rf "$T/uft"
fi
fi	# percall

#
# 2. Attach and detach: 10,000 functions; record -- exitcode.
#
want attach && for r in $(seq "$NMANY_RUNS"); do
	progress "attach/detach: 10k functions ($r/$NMANY_RUNS)"
	t0=$(now); "$T/many" >"$T/o"; t1=$(now)
	echo $(((t1 - t0) / 1000)) >>"$T/many.untraced.whole"

	t0=$(now); "$FLOOR" -t "$T/many" 'fn_*' -- "$T/many" >"$T/o" 2>"$T/e"; t1=$(now)
	end=$(sed -n 's/many: end_ns=//p' "$T/o")
	echo $(((t1 - t0) / 1000)) >>"$T/many.floor.whole"
	echo $(((t1 - end) / 1000)) >>"$T/many.floor.exit"
	sed -n 's/.* attach_ns=\([0-9]*\).*/\1/p' "$T/e" | awk '{ print $1 / 1000 }' >>"$T/many.floor.attach"
	sed -n 's/.* detach_ns=\([0-9]*\).*/\1/p' "$T/e" | awk '{ print $1 / 1000 }' >>"$T/many.floor.detach"

	t0=$(now)
	BPFPROF_RELEASE_LOG=$T/release.log "$BPFPROF" record -v -F 'fn_*' -o "$T/m.bpfprof" -- "$T/many" \
		>"$T/o" 2>"$T/e" || notes+=("10k: bpfprof failed: $(tail -1 "$T/e")")
	t1=$(now)
	# links left to bpfprof-release (uprobe ones: one grace period each, overlapped)
	sed -n 's/.*links: [0-9]* made over the run; \([0-9]*\) uprobe links .* and \([0-9]*\) others.*/\1 \2/p' \
		"$T/e" >>"$T/many.links"
	end=$(sed -n 's/many: end_ns=//p' "$T/o")
	a=$(bp_attach_ms "$T/e")
	c=$(bp_counts "$T/e")
	[ "$c" = "10000 0" ] || notes+=("10k: bpfprof recorded '${c:-nothing}' instead of '10000 0'")
	echo $(((t1 - t0) / 1000)) >>"$T/many.bpfprof.whole"
	echo $(((t1 - end) / 1000)) >>"$T/many.bpfprof.exit"
	awk -v a="$a" 'BEGIN { print a * 1000 }' >>"$T/many.bpfprof.attach"
	awk -v a="$a" -v x=$(((t1 - end) / 1000)) 'BEGIN { print a * 1000 + x }' >>"$T/many.bpfprof.both"

	progress "attach/detach: record -- exitcode ($r/$NMANY_RUNS)"
	t0=$(now); "$T/exitcode" || true; t1=$(now)
	echo $(((t1 - t0) / 1000)) >>"$T/exit.untraced.whole"
	t0=$(now); "$FLOOR" "$T/exitcode" 'f' -- "$T/exitcode" || true; t1=$(now)
	echo $(((t1 - t0) / 1000)) >>"$T/exit.floor.whole"
	t0=$(now); "$BPFPROF" record -o "$T/e.bpfprof" -- "$T/exitcode" 2>"$T/e" || true; t1=$(now)
	echo $(((t1 - t0) / 1000)) >>"$T/exit.bpfprof.whole"
	if [ $have_bpftrace = 1 ]; then
		t0=$(now)
		bpftrace -q -e "uprobe:$T/exitcode:f {} uretprobe:$T/exitcode:f {}" -c "$T/exitcode" \
			>/dev/null 2>&1 || true
		t1=$(now)
		echo $(((t1 - t0) / 1000)) >>"$T/exit.bpftrace.whole"
	fi
done
# bpfprof-release of the 10k runs: each logs the removal once done (nobody waited for it)
if [ -e "$T/release.log" ]; then
	for i in $(seq 600); do
		[ "$(wc -l <"$T/release.log")" -ge "$NMANY_RUNS" ] && break
		sleep 0.1
	done
	sed -n 's/.* removed in \([0-9]*\) ms/\1/p' "$T/release.log" | awk '{ print $1 * 1000 }' \
		>"$T/many.release"
fi
for f in "$T"/many.* "$T"/exit.*; do
	[ -e "$f" ] || continue
	median <"$f" | awk '{ print $1 / 1000 }' >"$f.ms"	# us -> ms
done

#
# 3. Sustained rate: nothing lost with the default buffer?
#
if want sustained; then
	progress "sustained: $NSUST calls"
	if "$BPFPROF" record -F f_push -o "$T/s.bpfprof" -- "$I" f_push "$NSUST" >"$T/o" 2>"$T/e"; then
		# "N calls recorded in 7.12 s, L lost records"
		sed -n 's/^bpfprof: \([0-9]*\) calls recorded in \([0-9.]*\) \([a-z]*\), \([0-9]*\) lost.*/\1 \2 \3 \4/p' "$T/e" |
			awk '{ s = $3 == "s" ? $2 : $3 == "ms" ? $2 / 1000 : $2 / 1e6; print $1, $1 / s, $4 }' >"$T/sust"
	else
		notes+=("sustained: bpfprof failed: $(tail -1 "$T/e")")
	fi
	rm -f "$T/s.bpfprof"
fi

#
# 3b. Python (CPython 3.11): what an exact Python call costs, and sampling.
#     Per round: the untraced run, then the traced ones, so that ratios and
#     differences come from runs side by side.  The interpreter is copied
#     (its own inode: probes other programs put on /usr/bin/python3.11 do
#     not fire in these runs); it finds its library by its built-in prefix.
#
PY=/usr/bin/python3.11
if want python; then
	if [ -x "$PY" ]; then
		cp "$PY" "$T/python3.11"
		cp bench/pycalls.py "$T/"
		TPY=$T/python3.11
		for r in $(seq "$RUNS"); do
			progress "python: calls, untraced ($r/$RUNS)"
			"$TPY" "$T/pycalls.py" calls "$N_PY" >"$T/o" 2>"$T/e" &&
				ns_per_call "$T/o" >>"$T/py.untraced.all" ||
				notes+=("python calls untraced failed: $(tail -1 "$T/e")")
			progress "python: calls, record -F py:f ($r/$RUNS)"
			if "$BPFPROF" record -F 'py:pycalls.py:f' -o "$T/p.bpfprof" -- "$TPY" "$T/pycalls.py" calls \
				"$N_PY" >"$T/o" 2>"$T/e"; then
				ns_per_call "$T/o" >>"$T/py.bpfprof.all"
				c=$(bp_counts "$T/e")
				[ "$c" = "$N_PY 0" ] || notes+=("python calls: bpfprof recorded '${c:-nothing}' instead of '$N_PY 0'")
			else
				notes+=("python calls: bpfprof failed: $(tail -1 "$T/e")")
			fi
			for hz in 0 99 999; do
				progress "python: burn, sample=$hz ($r/$RUNS)"
				if [ $hz = 0 ]; then
					"$TPY" "$T/pycalls.py" burn "$N_BURN" >"$T/o" 2>"$T/e" || true
				else
					"$BPFPROF" record --sample=$hz -o "$T/p.bpfprof" -- "$TPY" "$T/pycalls.py" \
						burn "$N_BURN" >"$T/o" 2>"$T/e" || true
				fi
				take_figures "python burn (sample=$hz)" cpu_ns:"burn.$hz.cpu.all" \
					wall_ns:"burn.$hz.wall.all" || continue
			done
		done
		for f in "$T"/py.*.all "$T"/burn.*.all; do
			[ -e "$f" ] && median <"$f" >"${f%.all}"
		done
		rm -f "$T/p.bpfprof"
	else
		notes+=("python: $PY not found (Debian python3.11): section skipped")
	fi
fi

#
# 3c. The overhead governor: the hot-tiny program untraced, then under each
#     --max-overhead limit, in the same round; its own elapsed_ns.
#
if want governor; then
	for r in $(seq "$RUNS"); do
		for lim in untraced $GOV_LIMITS; do
			progress "governor: hottiny $GOV_ARGS, $lim ($r/$RUNS)"
			if [ "$lim" = untraced ]; then
				"$T/hottiny" $GOV_ARGS >"$T/o" 2>"$T/e" || true
			else
				"$BPFPROF" record --max-overhead "$lim" -o "$T/g.bpfprof" -- "$T/hottiny" $GOV_ARGS \
					>"$T/o" 2>"$T/e" || true
				grep -q 'no longer tracing tiny' "$T/e" ||
					notes+=("governor $lim: tiny was not dropped: $(tail -1 "$T/e")")
			fi
			take_figures "governor $lim" elapsed_ns:"gov.$lim.wall.all" \
				cpu_ns:"gov.$lim.all" || continue
		done
	done
	for f in "$T"/gov.*.all; do
		[ -e "$f" ] && median <"$f" >"${f%.all}"
	done
	rm -f "$T/g.bpfprof"
fi

#
# 4. Decoding: decoder + Chrome exporter on one core, vs uftrace dump --chrome;
#    the same records into Perfetto's format and the archive, and the bytes
#    per call each format takes.
#
uft_rate="" uft_rss="" bpc_json="" bpc_pf="" bpc_arch=""
if want decode; then
progress "decode: $NDEC records -> Chrome JSON"
"$T/decode_bench" -n "$NDEC" -f chrome >/dev/null 2>"$T/dec.chrome" ||
	notes+=("decode_bench failed: $(tail -1 "$T/dec.chrome")")
progress "decode: $((NDEC / 10)) records -> Chrome JSON file"
"$T/decode_bench" -n $((NDEC / 10)) -f chrome -o "$T/dec.json" 2>"$T/dec.chrome_small" || true
progress "decode: $NDEC records -> Perfetto"
"$T/decode_bench" -n "$NDEC" -f perfetto >/dev/null 2>"$T/dec.perfetto" ||
	notes+=("decode_bench -f perfetto failed: $(tail -1 "$T/dec.perfetto")")
progress "decode: $((NDEC / 10)) records -> Perfetto file"
"$T/decode_bench" -n $((NDEC / 10)) -f perfetto -o "$T/dec.pftrace" 2>"$T/dec.perfetto_small" || true
progress "decode: $NDEC records -> archive + report"
"$T/decode_bench" -n "$NDEC" -f archive -r -o "$T/dec.bpfprof" 2>"$T/dec.archive" ||
	notes+=("decode_bench -f archive failed: $(tail -1 "$T/dec.archive")")
# bytes per call of each format, from the files written on the same synthetic records
bpc() {
	local b c
	b=$([ -f "$1" ] && stat -c %s "$1" || true)
	c=$(sed -n 's/.* calls=\([0-9]*\).*/\1/p' "$T/$2" 2>/dev/null || true)
	awk -v b="$b" -v c="$c" 'BEGIN { if (b != "" && c > 0) printf "%.1f", b / c }'
}
bpc_json=$(bpc "$T/dec.json" dec.chrome_small)
bpc_pf=$(bpc "$T/dec.pftrace" dec.perfetto_small)
bpc_arch=$(bpc "$T/dec.bpfprof" dec.archive)
rm -f "$T/dec.bpfprof" "$T/dec.json" "$T/dec.pftrace"

if [ $have_uftrace = 1 ]; then
	progress "decode: uftrace record $NUFT calls"
	if uftrace record -d "$T/uftd" "$T/uftrace_spin_pg" "$NUFT" >/dev/null 2>"$T/e"; then
		progress "decode: uftrace dump --chrome"
		# user+sys CPU of the dump and its peak RSS (GNU time), else bash's times
		if [ -x /usr/bin/time ]; then
			/usr/bin/time -f '%U %S %M' -o "$T/uft.time" \
				uftrace dump --chrome -d "$T/uftd" >/dev/null 2>"$T/e"
			read -r u s m <"$T/uft.time"
			uft_rss=$(awk -v m="$m" 'BEGIN { printf "%.1f", m / 1024 }')
		else
			(uftrace dump --chrome -d "$T/uftd" >/dev/null 2>"$T/e"; times) | tail -1 >"$T/uft.time"
			read -r u s <"$T/uft.time"
			u=$(echo "$u" | awk -Fm '{ print $1 * 60 + $2 }') s=$(echo "$s" | awk -Fm '{ print $1 * 60 + $2 }')
		fi
		# entry + exit per call of tiny, plus main's
		uft_rate=$(awk -v u="$u" -v s="$s" -v n="$NUFT" 'BEGIN { print 2 * (n + 1) / (u + s) }')
	else
		notes+=("uftrace record for the dump failed: $(tail -1 "$T/e")")
	fi
	rm -rf "$T/uftd"
fi
fi	# decode

#
# 5. Probe paths of real binaries: the share of functions whose entry probe
#    the kernel emulates, at the entry or past a prefix (bpfprof list).
#
if want paths; then
	for b in /lib/x86_64-linux-gnu/libc.so.6 /usr/bin/python3.11 /bin/bash; do
		[ -e "$b" ] || continue
		progress "paths: $b"
		# "probe paths: emulated 1495 (69%: 865 at the entry, 31 of them on a jump; 0 past
		#  endbr64; 630 past a longer prefix), nop5 1, single-step 656 (30%)"
		"$BPFPROF" list "$b" 2>&1 >/dev/null |
			sed -n 's/.*probe paths: emulated \([0-9]*\) (\([0-9]*\)%: \([0-9]*\) at the entry, \([0-9]*\) of them on a jump; \([0-9]*\) past endbr64; \([0-9]*\) past a longer prefix), nop5 \([0-9]*\), single-step \([0-9]*\).*/\1 \3 \4 \5 \6 \7 \8/p' \
			>"$T/paths.$(basename "$b")" || true
	done
fi

#
# The table.
#
val() { [ -s "$T/$1" ] && cat "$T/$1" || echo ""; }
# a field of decode_bench's output; empty when the decode section did not run
dec_field() { [ -s "$T/$1" ] && sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$T/$1" || true; }

{
echo "bpfprof benchmarks  $(date -u +%Y-%m-%d)  kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "medians of $RUNS runs (attach/detach: $NMANY_RUNS); per-call figures in the target thread's CPU time"
echo
printf '%-40s %9s %9s %9s %9s %9s %9s %7s %9s\n' "" untraced floor floor+rec bpfprof bpftrace uftrace ratio goal
echo "per traced call, entry+return: ns added (untraced: ns per call); ratio = bpfprof / floor"
row_call() {
	local key=$1 label=$2 b
	b=$(val "$key.untraced")
	awk -v l="$label" -v b="$b" -v f="$(val "$key.floor")" -v fr="$(val "$key.floor_rec")" \
		-v bp="$(val "$key.bpfprof")" -v bt="$(val "$key.bpftrace")" -v u="$(val "$key.uftrace")" '
	function d(x) { return x == "" ? "-" : sprintf("%.0f", x - b) }
	BEGIN {
		r = (f != "" && bp != "" && f - b > 0) ? sprintf("%.2f", (bp - b) / (f - b)) : "-"
		g = r == "-" ? "" : (r <= 1.15 ? "<=1.15 ok" : "<=1.15 MISS")
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", l, (b == "" ? "-" : sprintf("%.1f", b)),
			d(f), d(fr), d(bp), d(bt), d(u), r, g
	}'
}
row_call push     "f_push        push (emulated)"
row_call nop      "f_nop         nop (emulated)"
row_call nop5     "f_nop5        5-byte nop"
row_call endbr    "f_endbr_push  endbr64;push, probed +4"
row_call endbr_ns "f_endbr_push  --no-skip-endbr (1-step)"
row_call endbr_r  "f_endbr_ret   endbr64;ret (1-step)"
row_call riprel   "f_riprel      rip-relative (1-step)"
row_call sub      "f_sub         sub \$8,%rsp (1-step)"
row_call tiny     "tiny()        C, push; uftrace: -pg"
row_call movp     "f_mov_push    mov x(%rip);push, +6"
row_call movp_ns  "f_mov_push    at the entry (1-step)"
row_call xorp     "f_xor_push    xor;push, probed +2"
row_call testje   "f_test_je     test;je, probed on je"
# the placement goal: a mov-first function costs at most 1.3x a push-first one
awk -v u="$(val movp.untraced)" -v m="$(val movp.bpfprof)" -v pu="$(val push.untraced)" -v p="$(val push.bpfprof)" '
	BEGIN {
		if (m == "" || p == "" || p - pu <= 0) exit
		r = (m - u) / (p - pu)
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7.2f %9s\n", "f_mov_push / f_push, bpfprof", "-", "-",
			"-", "-", "-", "-", r, r <= 1.3 ? "<=1.3 ok" : "<=1.3 MISS"
	}'

echo "attach/detach, ms; ratio = bpfprof / floor"
row_ms() {
	local label=$1 u=$2 f=$3 bp=$4 bt=$5 goal=$6
	awk -v l="$label" -v u="$u" -v f="$f" -v bp="$bp" -v bt="$bt" -v goal="$goal" '
	function v(x) { return x == "" ? "-" : sprintf("%.1f", x) }
	BEGIN {
		r = (f != "" && bp != "" && f > 0) ? sprintf("%.2f", bp / f) : "-"
		g = ""
		if (goal != "" && bp != "") g = "<" goal (bp < goal ? " ok" : " MISS")
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", l, v(u), v(f), "-", v(bp), v(bt), "-", r, g
	}'
}
row_ms "10k functions: attach"               "" "$(val many.floor.attach.ms)" "$(val many.bpfprof.attach.ms)" "" ""
row_ms "10k functions: workload end -> exit" "" "$(val many.floor.exit.ms)" "$(val many.bpfprof.exit.ms)" "" ""
row_ms "  (floor: the detach alone)"         "" "$(val many.floor.detach.ms)" "" "" ""
row_ms "10k functions: attach + end->exit"   "" "" "$(val many.bpfprof.both.ms)" "" 200
row_ms "  bpfprof-release: probes removed in"  "" "$(val many.floor.detach.ms)" "$(val many.release.ms)" "" ""
[ -s "$T/many.links" ] && awk '{ u += $1; o += $2 } END { printf "  %-38s %9s %9s %9s %9.1f  uprobe links (a grace period each, overlapped), %.1f others\n", "10k functions: links, grace periods", "-", "2", "-", u / NR, o / NR }' "$T/many.links"
row_ms "10k functions: whole process"        "$(val many.untraced.whole.ms)" "$(val many.floor.whole.ms)" "$(val many.bpfprof.whole.ms)" "" ""
row_ms "record -- exitcode: whole process"   "$(val exit.untraced.whole.ms)" "$(val exit.floor.whole.ms)" "$(val exit.bpfprof.whole.ms)" "$(val exit.bpftrace.whole.ms)" 150

echo "sustained: f_push called as fast as one thread can, recorded with the defaults"
# the sustained section may not have run (SECTIONS): empty fields, not unbound ones
sn="" sr="" sl=""
[ -s "$T/sust" ] && read -r sn sr sl <"$T/sust"
awk -v n="$sn" -v r="$sr" -v l="$sl" -v want="$NSUST" '
	BEGIN {
		g = n == "" ? "" : (l == 0 && n == want ? "0 lost ok" : "0 lost MISS")
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", sprintf("%gM calls: M calls/s, lost", want / 1e6),
			"-", "-", "-", n == "" ? "-" : sprintf("%.2f/%d", r / 1e6, l), "-", "-", "-", g
	}'
echo "python (CPython 3.11, bench/pycalls.py): ns added per call (untraced: ns per call); ratio = traced / untraced"
awk -v u="$(val py.untraced)" -v bp="$(val py.bpfprof)" -v n="$N_PY" '
	BEGIN {
		if (u == "" || bp == "") exit
		printf "  %-38s %9.1f %9s %9s %9.0f %9s %9s %7.0f %9s\n", sprintf("f(): %dk exact calls, -F py:f", n / 1000),
			u, "-", "-", bp - u, "-", "-", (u > 0 ? bp / u : 0), ""
	}'
echo "python, CPU-bound (burn): ms of the work, CPU / wall; ratio = sampled / untraced (CPU, wall)"
for hz in 99 999; do
	awk -v hz=$hz -v uc="$(val burn.0.cpu)" -v uw="$(val burn.0.wall)" -v c="$(val burn.$hz.cpu)" \
		-v w="$(val burn.$hz.wall)" '
	BEGIN {
		if (uc == "" || c == "" || uc <= 0 || uw <= 0) exit
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", "--sample=" hz,
			sprintf("%.0f/%.0f", uc / 1e6, uw / 1e6), "-", "-", sprintf("%.0f/%.0f", c / 1e6, w / 1e6),
			"-", "-", sprintf("%.2f/%.2f", c / uc, w / uw), ""
	}'
done
echo "governor: hottiny $GOV_ARGS, CPU ms from its first call (wall ms); ratio = --max-overhead / untraced, CPU (wall)"
for lim in $GOV_LIMITS; do
	awk -v lim="$lim" -v u="$(val gov.untraced)" -v t="$(val gov.$lim)" -v uw="$(val gov.untraced.wall)" \
		-v tw="$(val gov.$lim.wall)" '
	BEGIN {
		if (u == "" || t == "" || u <= 0 || uw <= 0) exit
		goal = 1 + lim / 100
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", "--max-overhead " lim,
			sprintf("%.0f(%.0f)", u / 1e6, uw / 1e6), "-", "-", sprintf("%.0f(%.0f)", t / 1e6, tw / 1e6),
			"-", "-", sprintf("%.2f(%.2f)", t / u, tw / uw),
			sprintf("<=%g%s", goal, t / u <= goal ? " ok" : " MISS")
	}'
done
echo "decoding to Chrome JSON, one core: M records/s (CPU time); ratio = bpfprof / uftrace dump"
awk -v bp="$(dec_field dec.chrome records_per_cpu_s)" -v u="$uft_rate" -v n="$NDEC" '
	BEGIN {
		r = (u != "" && bp != "") ? sprintf("%.1f", bp / u) : "-"
		g = bp == "" ? "" : ">=10" (bp >= 1e7 ? " ok" : " MISS")
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", sprintf("%.0fM records -> Chrome JSON", n / 1e6),
			"-", "-", "-", bp == "" ? "-" : sprintf("%.1f", bp / 1e6), "-",
			u == "" ? "-" : sprintf("%.1f", u / 1e6), r, g
	}'
awk -v a="$(dec_field dec.chrome maxrss_kb)" -v s="$(dec_field dec.chrome_small maxrss_kb)" -v u="$uft_rss" -v n="$NDEC" '
	BEGIN {
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", "  peak RSS, MB (" n / 1e7 "M / " n / 1e6 "M records)",
			"-", "-", "-", a == "" ? "-" : sprintf("%.1f/%.1f", s / 1024, a / 1024), "-", u == "" ? "-" : u, "-", ""
	}'
awk -v bp="$(dec_field dec.perfetto records_per_cpu_s)" -v n="$NDEC" '
	BEGIN {
		g = bp == "" ? "" : ">=20" (bp >= 2e7 ? " ok" : " MISS")
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", sprintf("%.0fM records -> Perfetto", n / 1e6),
			"-", "-", "-", bp == "" ? "-" : sprintf("%.1f", bp / 1e6), "-", "-", "-", g
	}'
awk -v j="$bpc_json" -v p="$bpc_pf" -v a="$bpc_arch" '
	BEGIN {
		g = p == "" ? "" : "<=32" (p <= 32 ? " ok" : " MISS")
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", "  bytes/call: JSON/Perfetto/archive",
			"-", "-", "-", (j == "" ? "-" : j) "/" (p == "" ? "-" : p) "/" (a == "" ? "-" : a),
			"-", "-", "-", g
	}'
awk -v bp="$(dec_field dec.archive records_per_cpu_s)" -v n="$NDEC" '
	BEGIN {
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", sprintf("%.0fM records -> archive + summary", n / 1e6),
			"-", "-", "-", bp == "" ? "-" : sprintf("%.1f", bp / 1e6), "-", "-", "-", ""
	}'
echo "probe paths of real binaries (bpfprof list): functions emulated now / total; before placement"
for b in libc.so.6 python3.11 bash; do
	[ -s "$T/paths.$b" ] || continue
	read -r emu entry jumps endbr longer nop5 step <"$T/paths.$b"
	awk -v b="$b" -v emu="$emu" -v entry="$entry" -v jumps="$jumps" -v endbr="$endbr" \
		-v nop5="$nop5" -v step="$step" '
	BEGIN {
		n = emu + nop5 + step
		before = entry - jumps + endbr + nop5	# push/nop at the entry or past endbr64, nop5
		printf "  %-38s %9s %9s %9s %9s %9s %9s %7s %9s\n", b ": fast path now / before",
			"-", "-", "-", sprintf("%.0f%%/%.0f%%", 100 * (emu + nop5) / n, 100 * before / n),
			"-", "-", "-", ""
	}'
done
if [ ${#notes[@]} -gt 0 ]; then
	echo
	echo "problems:"
	for n in "${notes[@]}"; do echo "  $n"; done
fi
} >"$T/table"
printf '%-70s\r' "" >&2
cat "$T/table"
# a subset of the sections is a partial table: it does not replace the full one
if [ "$SECTIONS" = "$ALL_SECTIONS" ]; then
	cp "$T/table" "$RESULTS"
else
	echo "run.sh: SECTIONS=\"$SECTIONS\": $RESULTS left as it was" >&2
fi
