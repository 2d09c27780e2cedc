// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * decode_bench: throughput of the decoder and an exporter on one core.
 *
 *   decode_bench [-n RECORDS] [-f FORMAT] [-r] [-o PATH]
 *
 * Synthesizes RECORDS (default 10,000,000) ring buffer records as the BPF
 * side writes them (struct bp_rec_call): 4 threads, 50 functions, entry/exit
 * pairs nested about 5 deep along a fixed call graph (every function has 3
 * possible callees, so the number of distinct call paths stays bounded as in
 * a real program), 50-500 ns apart.  Feeds them through decoder__feed() into
 * the FORMAT exporter (default chrome) writing PATH (default "-": standard
 * output, redirect it to /dev/null; never "-o /dev/null": the exporter writes
 * a temporary file beside its path and renames it into place).  -r adds the
 * report aggregation `record` does for its summary.
 *
 * The records are generated once into a 64 Ki-record block (2 MiB) that
 * closes every call it opens, and the block is replayed with shifted
 * timestamps, so the input takes no memory to speak of and peak RSS is the
 * decoder's and the exporter's.  Prints one line on stderr:
 *
 *   decode_bench: format=chrome records=N calls=C cpu_s=X wall_s=Y \
 *                 records_per_cpu_s=R maxrss_kb=M
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "decode/decode.h"
#include "exporters/exporter.h"
#include "base/log.h"
#include "report/report.h"
#include "model/session.h"

#define NTHREADS	4
#define NFUNCS		50
#define BLOCK		65536	/* records per replayed block (even: pairs) */
#define TARGET_DEPTH	5

struct ctx {
	struct bp_session *s;
	struct exporter *exp;
	struct report *rep;
	uint64_t calls;
};

static int sink(void *p, const struct bp_event *ev)
{
	struct ctx *c = p;
	int err;

	if (c->rep) {
		err = report__add(c->rep, c->s, ev);
		if (err)
			return err;
	}
	c->calls += ev->kind == BP_EV_CALL;
	return exporter__event(c->exp, c->s, ev);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	/* xorshift64: reproducible, no libc state */
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state >> 32) % n;
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * One block of records: each thread walks the call graph (entry more likely
 * below TARGET_DEPTH, exit more likely above), and every call is closed by
 * the end of the block.  Threads take turns in runs of 1-64 records, as
 * several CPUs' records interleave in the ring buffer.
 */
static void gen_block(struct bp_rec_call *v, uint64_t t0, uint64_t *span)
{
	uint32_t stack[NTHREADS][64], depth[NTHREADS] = { 0 };
	uint64_t ts = t0;
	size_t i = 0, per_thread = BLOCK / NTHREADS, left[NTHREADS];
	int t = 0, run = 0, k;

	for (k = 0; k < NTHREADS; k++)
		left[k] = per_thread;
	while (i < BLOCK) {
		struct bp_rec_call *r = &v[i];
		uint32_t d, func;
		bool enter;

		if (!run || !left[t]) {
			do
				t = rnd(NTHREADS);
			while (!left[t]);
			run = 1 + rnd(64);
		}
		run--;
		d = depth[t];
		/* Room left must close every open call. */
		if (d == 0)
			enter = true;
		else if (left[t] <= d)
			enter = false;
		else
			enter = rnd(2 * TARGET_DEPTH) >= d + (d > TARGET_DEPTH ? 2 : 0);
		if (d >= 60)
			enter = false;
		if (enter) {
			func = d ? (stack[t][d - 1] * 7 + 1 + rnd(3)) % NFUNCS : rnd(4);
			stack[t][d] = func;
			depth[t]++;
		} else {
			func = stack[t][--depth[t]];
		}
		ts += 50 + rnd(450);
		memset(r, 0, sizeof(*r));
		r->h.type = enter ? BP_REC_ENTRY : BP_REC_EXIT;
		r->h.cpu = t % 2;
		r->h.ts = ts;
		r->h.pid_tgid = (4000ull << 32) | (4000 + t);
		r->func_id = func;
		/* entry: sp at the return address; exit: 8 bytes higher */
		if (enter)
			r->sp = 0x7ffd00000000ull - (uint64_t)t * (1 << 20) - (d + 1) * 64;
		else
			r->sp = 0x7ffd00000000ull - (uint64_t)t * (1 << 20) - d * 64 + 8;
		left[t]--;
		i++;
	}
	*span = ts - t0 + 500;
}

int main(int argc, char **argv)
{
	const char *format = "chrome", *path = "-";
	const struct exporter_ops *ops;
	struct bp_session s;
	struct ctx c = { .s = &s };
	struct decoder *dec = NULL;
	struct bp_rec_call *blk = NULL;
	unsigned long long n = 10000000ull, done = 0;
	uint64_t span, t0 = 1000000000ull;
	double c0, w0, cpu, wall;
	struct rusage ru;
	bool with_report = false;
	int opt, err = 0, i;

	while ((opt = getopt(argc, argv, "n:f:o:r")) != -1) {
		switch (opt) {
		case 'n':
			n = strtoull(optarg, NULL, 0);
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			path = optarg;
			break;
		case 'r':
			with_report = true;
			break;
		default:
			fprintf(stderr, "usage: decode_bench [-n RECORDS] [-f FORMAT] [-r] [-o PATH]\n");
			return 2;
		}
	}
	ops = exporter__find(format);
	if (!ops) {
		fprintf(stderr, "decode_bench: unknown format '%s'\n", format);
		return 2;
	}

	session__init(&s);
	s.cmdline = xstrdup("decode_bench");
	s.hostname = xstrdup("bench");
	s.kernel = xstrdup("");
	s.t0 = t0;
	session__add_module(&s, "/usr/bin/decode_bench");
	for (i = 0; i < NFUNCS; i++) {
		char name[32];
		struct bp_func f = { .name = name, .module = 0, .addr = 0x1000 + 64 * i, .size = 64,
				     .offset = 0x1000 + 64 * i };

		snprintf(name, sizeof(name), "function_%02d", i);
		session__add_func(&s, &f);
	}
	for (i = 0; i < NTHREADS; i++)
		session__thread(&s, 4000 + i, 4000);

	blk = xmalloc(BLOCK * sizeof(*blk));
	gen_block(blk, t0 + 1000, &span);

	if (with_report) {
		err = report__new(NULL, &c.rep);
		if (err)
			goto cleanup;
	}
	err = exporter__new(ops, path, &s, &c.exp);
	if (err)
		goto cleanup;
	err = decoder__new(&s, sink, &c, &dec);
	if (err)
		goto cleanup;

	c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	w0 = now_s(CLOCK_MONOTONIC);
	while (done < n) {
		size_t k, m = n - done < BLOCK ? (size_t)(n - done) : BLOCK;

		for (k = 0; k < m; k++) {
			err = decoder__feed(dec, &blk[k], sizeof(blk[k]));
			if (err)
				goto cleanup;
		}
		done += m;
		for (k = 0; k < BLOCK; k++)
			blk[k].h.ts += span;
	}
	err = decoder__finish(dec);
	if (err)
		goto cleanup;
	s.nrecords = done;
	s.duration = span * (done / BLOCK + 1);
	err = exporter__finish(c.exp, &s);
	if (err)
		goto cleanup;
	cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	wall = now_s(CLOCK_MONOTONIC) - w0;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "decode_bench: format=%s%s records=%llu calls=%llu cpu_s=%.3f wall_s=%.3f "
		"records_per_cpu_s=%.0f maxrss_kb=%ld\n", format, with_report ? "+report" : "",
		done, (unsigned long long)c.calls, cpu, wall, done / cpu, ru.ru_maxrss);
cleanup:
	if (err)
		fprintf(stderr, "decode_bench: failed: %s\n", strerror(-err));
	decoder__free(dec);
	exporter__free(c.exp);
	report__free(c.rep);
	session__free(&s);
	free(blk);
	return err ? 1 : 0;
}
