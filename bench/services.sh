#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The overhead governor on real services (`bash bench/services.sh`, as root,
# from the repository root; the services install with scripts/setup.sh
# --bench): redis-server under `redis-benchmark -t get`, and nginx (one
# worker, a small static file) under wrk, on 127.0.0.1 only, with a bounded
# load (a fixed number of connections for a fixed time).
#
# For each service, in one run, untraced load rounds beside rounds under
# `bpfprof attach` with its defaults, --max-overhead 100 and 10: the
# throughput, and its ratio traced / untraced (the untraced rounds just
# before and after, averaged); and the service's CPU time per request,
# traced / untraced (CPU/req: utime + stime of its processes over the
# round's requests), the slowdown itself where the load generator on the
# same CPUs bounds the throughput.  bpfprof attaches, the load runs WARM_S
# (the governor decides in its first windows: not measured), then LOAD_S
# measured; then bpfprof is stopped.  From its archive: the functions it
# dropped, and the calls of the request functions (redis: processCommand,
# call, readQueryFromClient; nginx: ngx_http_process_request,
# ngx_http_handler) against the requests served while it was attached.
#
#   LOAD_S=5 WARM_S=5 CONNS=20 LIMITS="default 100 10" SERVICES="redis nginx"
#
# KEEP=DIR keeps each run's archive and stderr in DIR (SVC.LIMIT.bpfprof,
# SVC.LIMIT.err), with bpfprof run -v (the governor's windows and rankings).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh services.sh

LOAD_S=${LOAD_S:-5}
WARM_S=${WARM_S:-5}
CONNS=${CONNS:-20}
LIMITS=${LIMITS:-"default 100 10"}
SERVICES=${SERVICES:-"redis nginx"}
KEEP=${KEEP:-}
VFLAG=()
[ -z "$KEEP" ] || { mkdir -p "$KEEP"; VFLAG=(-v); }

bench_need_root uprobes
bench_need_built bpfprof "'make'"
bench_tmp bpfprof-services
cp bpfprof "$tmp/"
BPFPROF=$tmp/bpfprof

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ---------------------------------------------------------------- the services

redis_start() {
	command -v redis-server >/dev/null || die "redis-server missing: scripts/setup.sh --bench"
	PORT=$(free_port)
	redis-server --bind 127.0.0.1 --port "$PORT" --save "" --appendonly no --daemonize no \
		--dir "$tmp" >"$tmp/redis.log" 2>&1 &
	SVC_PID=$!
	PIDS=$SVC_PID
	for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
	redis-cli -p "$PORT" set key:__rand_int__ xxxxxxxx >/dev/null
}
# load SECONDS -> requests/s on stdout
redis_load() {
	local n
	# -n large enough to last; cut at $1 s by timeout, the rate from redis itself
	local before after
	before=$(redis-cli -p "$PORT" info stats | sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p')
	timeout -s INT "$1" redis-benchmark -h 127.0.0.1 -p "$PORT" -t get -c "$CONNS" -n 100000000 -q \
		>/dev/null 2>&1 || true
	after=$(redis-cli -p "$PORT" info stats | sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p')
	n=$((after - before))
	awk -v n="$n" -v s="$1" 'BEGIN { printf "%.0f\n", n / s }'
}
redis_served() { redis-cli -p "$PORT" info stats | sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p'; }
REDIS_FUNCS="processCommand call readQueryFromClient"

nginx_start() {
	command -v nginx >/dev/null || die "nginx missing: scripts/setup.sh --bench"
	command -v wrk >/dev/null || die "wrk missing: scripts/setup.sh --bench"
	PORT=$(free_port)
	mkdir -p "$tmp/www" "$tmp/nginx"
	head -c 512 /dev/zero | tr '\0' x >"$tmp/www/index.html"
	cat >"$tmp/nginx.conf" <<-EOF
	worker_processes 1;
	daemon off;
	pid $tmp/nginx.pid;
	error_log $tmp/nginx/error.log;
	events { worker_connections 256; }
	http {
		access_log off;
		client_body_temp_path $tmp/nginx;
		proxy_temp_path $tmp/nginx;
		fastcgi_temp_path $tmp/nginx;
		uwsgi_temp_path $tmp/nginx;
		scgi_temp_path $tmp/nginx;
		server {
			listen 127.0.0.1:$PORT; root $tmp/www;
			location = /bpfprof-status { stub_status; }
		}
	}
	EOF
	nginx -c "$tmp/nginx.conf" -p "$tmp" >"$tmp/nginx.out" 2>&1 &
	SVC_PID=$!
	for _ in $(seq 50); do curl -s "http://127.0.0.1:$PORT/" >/dev/null 2>&1 && break; sleep 0.1; done
	PIDS="$SVC_PID,$(pgrep -P "$SVC_PID" | paste -sd,)"
}
nginx_load() {
	local r
	r=$(wrk -t1 -c"$CONNS" -d"${1}s" "http://127.0.0.1:$PORT/" 2>/dev/null |
		sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p')
	echo "${r:-0}"
}
# requests nginx served so far (stub_status: counts this look too, so a difference holds one)
nginx_served() {
	curl -s "http://127.0.0.1:$PORT/bpfprof-status" | awk 'NR == 3 { print $3 }'
}
NGINX_FUNCS="ngx_http_process_request ngx_http_handler"

# ---------------------------------------------------------------- one service

# The service's CPU time so far (every process of PIDS), in clock ticks:
# utime + stime, the fields after the command's closing parenthesis.
svc_cpu() {
	local t=0 p v
	for p in ${PIDS//,/ }; do
		v=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $12 + $13 }')
		t=$((t + ${v:-0}))
	done
	echo "$t"
}
# load_cpu SECONDS -> "REQUESTS_PER_S CPU_TICKS" (the service's CPU over the round)
load_cpu() {
	local c0 r c1
	c0=$(svc_cpu)
	r=$("${svc}_load" "$1")
	c1=$(svc_cpu)
	echo "$r $((c1 - c0))"
}

rows=()
run_service() {
	local svc=$1 funcs lim u0 u1 t opts served0 served1 rep
	"${svc}_start"
	funcs=$(eval echo "\$${svc^^}_FUNCS")
	"${svc}_load" 2 >/dev/null	# warm the service
	for lim in $LIMITS; do
		printf '  %-50s\r' "$svc: untraced" >&2
		read -r u0 c0 < <(load_cpu "$LOAD_S")
		opts=()
		[ "$lim" = default ] || opts=(--max-overhead "$lim")
		printf '  %-50s\r' "$svc: attach $lim" >&2
		"$BPFPROF" attach "${VFLAG[@]}" --pid "$PIDS" "${opts[@]}" -o "$tmp/$svc.$lim.bpfprof" \
			>"$tmp/$svc.$lim.out" 2>"$tmp/$svc.$lim.err" &
		local bp=$!
		sleep 1
		served0=$("${svc}_served")
		"${svc}_load" "$WARM_S" >/dev/null
		read -r t ct < <(load_cpu "$LOAD_S")
		kill -INT "$bp"
		wait "$bp" || true
		served1=$("${svc}_served")
		printf '  %-50s\r' "$svc: untraced" >&2
		read -r u1 c1 < <(load_cpu "$LOAD_S")
		"$BPFPROF" report --format json "$tmp/$svc.$lim.bpfprof" >"$tmp/rep.json" 2>/dev/null || true
		[ -z "$KEEP" ] || cp "$tmp/$svc.$lim.bpfprof" "$tmp/$svc.$lim.err" "$KEEP/" 2>/dev/null || true
		rows+=("$(python3 - "$svc" "$lim" "$u0" "$u1" "$t" "$((served1 - served0))" "$funcs" \
			"$tmp/$svc.$lim.err" "$tmp/rep.json" "$c0" "$c1" "$ct" <<-'EOF'
		import json, re, sys
		svc, lim, u0, u1, t, served, funcs, errf, repf, c0, c1, ct = sys.argv[1:]
		u = (float(u0) + float(u1)) / 2
		# the service's CPU per request, traced against untraced (the rounds' ticks over
		# their requests): the slowdown where the load generator, not the service, bounds
		# the throughput
		def per(c, r):
		    return float(c) / float(r) if float(r) > 0 else 0
		cu = (per(c0, u0) + per(c1, u1)) / 2
		cpu = "%6.2fx" % (per(ct, t) / cu) if cu > 0 else "     -"
		try:
		    rep = json.load(open(repf))
		except ValueError:
		    rep = {}
		dropped = [d["name"] for d in rep.get("dropped", [])]
		calls = {f["name"]: f.get("calls", 0) for f in rep.get("functions", []) if "name" in f}
		kept = " ".join("%s=%s%s" % (f, calls.get(f, 0), "(dropped)" if f in dropped else "")
		                for f in funcs.split())
		err = open(errf).read()
		m = re.findall(r"^bpfprof: the probes made \S+(?: \(and \d+ other process(?:es)?\))? (?:about|at least) ([\d.]+)x slower", err, re.M)
		est = m[-1] + "x" if m else "-"
		print("  %-6s %-8s %9.0f %9.0f %6.2fx %s %8s %5d  %s  (requests served while attached: %s)"
		      % (svc, lim, u, float(t), float(t) / u if u else 0, cpu, est, len(dropped), kept,
		         served))
		EOF
		)")
	done
	kill "$SVC_PID" 2>/dev/null || true
	wait "$SVC_PID" 2>/dev/null || true
}

for svc in $SERVICES; do
	run_service "$svc"
done
printf '%-60s\r' "" >&2
echo "real services, bounded load on 127.0.0.1 ($CONNS connections, ${LOAD_S}s measured after ${WARM_S}s attached): requests/s"
echo "  service limit     untraced    traced  ratio  CPU/req  estimate drops  request functions' calls"
for r in "${rows[@]}"; do echo "$r"; done
