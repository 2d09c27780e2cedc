/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * deepserver: a server whose request handler does its work deep down, the
 * shape of nginx (ngx_http_process_request -> ngx_http_handler -> ... ->
 * the write): the handler and its router do next to nothing themselves,
 * the tiny traced helpers under them are many, and the work is a leaf at
 * the bottom.  For the overhead governor: the handler's time is what its
 * tree does, not its own code, and must read so whatever the probes' cost
 * under it.
 *
 * Usage: deepserver [NREQ [NHELP [NLOOP [NWORK]]]]   (defaults 3000, 20, 10, 50000)
 *
 * Guaranteed facts (per run, one process, one thread):
 *   - serve() runs once: NREQ requests; for each it calls tick() NLOOP
 *     times (the event loop's turns), then handle() once.
 *   - handle() calls route() once and nothing else.  route() calls parse()
 *     once, then respond() once.  parse() calls parse_byte() NHELP times.
 *     respond() calls emit_byte() NHELP times, then work() once.
 *   - work() is a loop of NWORK steps on a volatile and calls nothing: its
 *     calls last many times any probe's cost.  tick(),
 *     parse_byte() and emit_byte() are leaves of a few instructions.  No
 *     other function of the source is called (main and serve once).
 *   - One line when serve() returned:
 *       "deepserver: handle=H route=R parse=P respond=S work=W parse_byte=A
 *        emit_byte=E tick=T"
 *     (H = R = P = S = W = NREQ, A = E = NREQ * NHELP, T = NREQ * NLOOP);
 *     exit status 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include "progs.h"

volatile unsigned long sink;

static long nreq = 3000, nhelp = 20, nloop = 10, nwork = 50000;
static long handle_calls, route_calls, parse_calls, respond_calls, work_calls;
static long parse_byte_calls, emit_byte_calls, tick_calls;

TRACED void tick(void)
{
	sink++;
	tick_calls++;
}

TRACED void parse_byte(long i)
{
	sink += (unsigned long)i & 7;
	parse_byte_calls++;
}

TRACED void emit_byte(long i)
{
	sink ^= (unsigned long)i & 3;
	emit_byte_calls++;
}

TRACED void work(void)
{
	volatile unsigned long acc = 0;
	long i;

	for (i = 0; i < nwork; i++)
		acc += (unsigned long)i ^ sink;
	sink += acc & 1;
	work_calls++;
}

TRACED void parse(long r)
{
	long i;

	for (i = 0; i < nhelp; i++)
		parse_byte(i + r);
	parse_calls++;
}

TRACED void respond(long r)
{
	long i;

	for (i = 0; i < nhelp; i++)
		emit_byte(i + r);
	work();
	respond_calls++;
}

TRACED void route(long r)
{
	parse(r);
	respond(r);
	route_calls++;
}

TRACED void handle(long r)
{
	route(r);
	handle_calls++;
}

TRACED void serve(void)
{
	long r, j;

	for (r = 0; r < nreq; r++) {
		for (j = 0; j < nloop; j++)
			tick();
		handle(r);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		nreq = atol(argv[1]);
	if (argc > 2)
		nhelp = atol(argv[2]);
	if (argc > 3)
		nloop = atol(argv[3]);
	if (argc > 4)
		nwork = atol(argv[4]);
	serve();
	printf("deepserver: handle=%ld route=%ld parse=%ld respond=%ld work=%ld parse_byte=%ld "
	       "emit_byte=%ld tick=%ld\n", handle_calls, route_calls, parse_calls, respond_calls,
	       work_calls, parse_byte_calls, emit_byte_calls, tick_calls);
	return 0;
}
