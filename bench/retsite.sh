#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Return events from uprobes on `ret` instructions, against uretprobes
# (docs/probe-cost.md, "Return probes on ret instructions").  Three parts:
#
#   percall  ns per call (wall clock and the thread's CPU time) of
#            bench/retsite_prog's naked functions, untraced and under
#            bench/retsite's modes (entry; entry + uretprobe; entry + uprobes
#            on the rets; the same two with records and a shadow stack),
#            the modes alternated round by round, medians; ratios against
#            untraced and against the uretprobe variant
#   lease    a thread that keeps calling a traced function while a return is
#            pending (retsite_prog busy: t_busy calls t_push every ms), traced
#            with uretprobes, with ret sites, and mixed (t_busy on its ret,
#            t_push on a uretprobe): how often the kernel re-arms the
#            thread's return-instance timer (ri_timer, timer:timer_start,
#            counted by bpftrace) and how long the release of an unrelated
#            uprobe_multi link takes meanwhile
#   shapes   rets per function and tail jumps in Debian binaries
#
#   sudo bash bench/retsite.sh            (after `make .output/bench/retsite
#                                          .output/bench/retsite_prog`)
#   RUNS=5 N=20000 LEASE_RUNS=3 LEASE_S=5 SECTIONS="percall lease shapes"
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh retsite.sh

RUNS=${RUNS:-5}
N=${N:-20000}
LEASE_RUNS=${LEASE_RUNS:-3}
LEASE_S=${LEASE_S:-5}	# lifetime of the busy target (bounds every stall it causes)
SECTIONS=${SECTIONS:-"percall lease shapes"}
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
OUT=.output/bench

bench_need_root uprobes
for f in $OUT/retsite $OUT/retsite_prog; do
	bench_need_built "$f" "'make $OUT/retsite $OUT/retsite_prog'"
done
bench_tmp bpfprof-retsite
cp $OUT/retsite $OUT/retsite_prog "$tmp/"
RS=$tmp/retsite
PROG=$tmp/retsite_prog

field() { sed -n "s/\(^\|.* \)$1=\([0-9.]*\).*/\2/p" "$2" | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

if want percall; then
	MODES="untraced entry uret ret uret_rec ret_rec"
	for r in $(seq "$RUNS"); do
		for f in t_push t_sub t_two; do
			for m in $MODES; do
				printf '  percall %s %s (%d/%d)   \r' "$f" "$m" "$r" "$RUNS" >&2
				if [ "$m" = untraced ]; then
					"$PROG" "$f" "$N" >"$tmp/o" 2>"$tmp/e"
				else
					timeout 300 "$RS" -m "$m" "$PROG" "$f" -- "$PROG" "$f" "$N" \
						>"$tmp/o" 2>"$tmp/e"
				fi
				field ns_per_call "$tmp/o" >>"$tmp/w.$f.$m"
				field cpu_ns_per_call "$tmp/o" >>"$tmp/c.$f.$m"
			done
		done
	done
	echo "per call: ns per call, medians of $RUNS runs of $N calls (wall clock / thread CPU);"
	echo "x: against untraced (wall) | against the uretprobe variant (uret for ret, uret_rec for ret_rec; wall, cpu)"
	printf '%-8s %-9s %12s %12s %10s %8s %8s\n' func mode wall_ns cpu_ns x_untr x_uret x_uret_cpu
	for f in t_push t_sub t_two; do
		u=$(median <"$tmp/w.$f.untraced")
		for m in $MODES; do
			w=$(median <"$tmp/w.$f.$m")
			c=$(median <"$tmp/c.$f.$m")
			case $m in
			ret) b=uret ;;
			ret_rec) b=uret_rec ;;
			*) b= ;;
			esac
			xw=- xc=-
			if [ -n "$b" ]; then
				xw=$(ratio "$w" "$(median <"$tmp/w.$f.$b")")
				xc=$(ratio "$c" "$(median <"$tmp/c.$f.$b")")
			fi
			printf '%-8s %-9s %12s %12s %10s %8s %8s\n' "$f" "$m" "$w" "$c" \
				"$(ratio "$w" "$u")" "$xw" "$xc"
		done
	done
	# exactness: the tail call and the two ret sites, one run each
	for m in uret_rec ret_rec; do
		timeout 120 "$RS" -t -m "$m" "$PROG" 'u_*' -- "$PROG" u_tail 1000 >/dev/null 2>"$tmp/e"
		echo "u_tail x1000 (u_tail jmp's to u_leaf), $m: $(grep -o 'entries=.*' "$tmp/e")"
	done
	timeout 120 "$RS" -t -m ret_rec "$PROG" t_two -- "$PROG" t_two 1000 >/dev/null 2>"$tmp/e"
	echo "t_two x1000 (two ret sites), ret_rec: $(grep -o 'ret_sites=.*' "$tmp/e")"
fi

if want lease; then
	have_bt=0
	command -v bpftrace >/dev/null && have_bt=1
	echo "lease: retsite_prog busy $LEASE_S (t_busy pending, t_push every ms), traced as MODE; an"
	echo "unrelated link attached and released 1 s in: ri_timer re-arms by the target, the release's"
	echo "time, and when it ended against the target's end (ms; > 0: after the target had ended)"
	echo "(others: uretprobe links of other tracers on the machine at the start; any of them can"
	echo "hold the same grace period)"
	printf '%-10s %8s %12s %16s %7s\n' mode ri_timer release_ms end_vs_target others
	for m in $(for r in $(seq "$LEASE_RUNS"); do echo none ret_rec mixed uret_rec; done); do
		bt=
		if [ $have_bt = 1 ]; then
			timeout -s INT -k 10 $((LEASE_S + 120)) bpftrace -q -e 'tracepoint:timer:timer_start
				/comm == "retsite_prog" && (uint64)args->function == kaddr("ri_timer")/
				{ @n = @n + 1; }
				END { printf("ri_timer=%d\n", @n); clear(@n); }' >"$tmp/bt" 2>&1 &
			bt=$!
			sleep 5	# bpftrace's start-up
		fi
		others=$(bpftool link list 2>/dev/null | grep -c 'uretprobe.multi' || true)
		case $m in
		none) "$PROG" busy "$LEASE_S" >"$tmp/busy" & ;;
		mixed) timeout 600 "$RS" -m mixed -X t_busy "$PROG" t_push -- "$PROG" busy "$LEASE_S" \
			>"$tmp/busy" & ;;
		*) timeout 600 "$RS" -m "$m" "$PROG" 't_[bp]u[sh]*' -- "$PROG" busy "$LEASE_S" \
			>"$tmp/busy" & ;;
		esac
		target=$!
		sleep 1
		"$RS" -R "$PROG" t_sub >"$tmp/rel"
		wait $target || true
		[ -n "$bt" ] && { kill -INT $bt 2>/dev/null || true; wait $bt || true; }
		d=$(awk -v a="$(field end_ns "$tmp/rel")" -v b="$(field end_ns "$tmp/busy")" \
			'BEGIN { printf "%+.0f", (a - b) / 1e6 }')
		printf '%-10s %8s %12s %16s %7s\n' "$m" "$(field ri_timer "$tmp/bt" 2>/dev/null || echo -)" \
			"$(field release_ms "$tmp/rel")" "$d" "$others"
		rm -f "$tmp/bt"
	done
fi

if want shapes; then
	echo "shapes: ret instructions per function (functions of .symtab/.dynsym and .eh_frame FDEs)"
	for f in /usr/bin/make /usr/lib/gcc/x86_64-linux-gnu/12/cc1 /lib/x86_64-linux-gnu/libc.so.6 \
		/usr/bin/python3.11; do
		[ -e "$f" ] && "$RS" -c "$f"
	done
fi
