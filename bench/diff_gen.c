// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff_gen: writes a big synthetic recording (.bpfprof archive) for timing
 * `bpfprof diff` on it.
 *
 *   diff_gen -o PATH [-n CALLS] [-s SCALE]
 *
 * CALLS (default 100,000,000) calls of 20 functions of one module "app", on
 * one thread, in a fixed call tree 3 deep (a root calling 4 middles, each
 * calling 4 leaves: 21 distinct call paths), each call's duration drawn from
 * a log-normal-ish spread around its function's own median, multiplied by
 * SCALE for the leaf "leaf_7" only (default 1: -s 1.1 makes leaf_7 10%
 * slower).  Deterministic: the same arguments give the same file.
 * Prints one line on stderr: calls, bytes, seconds.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "base/log.h"
#include "exporters/exporter.h"
#include "model/session.h"

static uint64_t rng = 0x853c49e6748fea9bull;

static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

/* A duration around `median` ns: exp of a sum of uniforms (close to log-normal). */
static uint64_t draw(double median)
{
	double z = uniform() + uniform() + uniform() - 1.5;

	return (uint64_t)(median * exp(0.5 * z)) + 1;
}

/* Writes ev as the next call (ids in order of writing): func, path, depth, [begin, end], self. */
static int put_call(struct exporter *e, struct bp_session *s, struct bp_event *ev, uint32_t func,
		    uint32_t path, uint32_t depth, uint64_t begin, uint64_t end, uint64_t self)
{
	ev->call.id++;
	ev->call.func = func;
	ev->call.path = path;
	ev->call.depth = depth;
	ev->call.begin = begin;
	ev->call.end = end;
	ev->call.self = self;
	return exporter__event(e, s, ev);
}

int main(int argc, char **argv)
{
	struct exporter *e = NULL;
	struct bp_session s;
	struct bp_event ev;
	const char *out = NULL;
	uint64_t n = 100000000, done = 0, t = 0;
	double scale = 1, t0;
	uint32_t f[21], p[21];
	struct timespec ts;
	struct stat st;
	char name[32];
	int c, i, j, err;

	while ((c = getopt(argc, argv, "o:n:s:")) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'n':
			n = strtoull(optarg, NULL, 10);
			break;
		case 's':
			scale = strtod(optarg, NULL);
			break;
		default:
			fprintf(stderr, "usage: diff_gen -o PATH [-n CALLS] [-s SCALE]\n");
			return 2;
		}
	}
	if (!out || !n || !(scale > 0)) {
		fprintf(stderr, "usage: diff_gen -o PATH [-n CALLS] [-s SCALE]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	session__init(&s);
	s.cmdline = xstrdup("diff_gen");
	session__add_module(&s, "/opt/app");
	/* f[0] root, f[1..4] middles, f[5..20] leaves */
	for (i = 0; i < 21; i++) {
		struct bp_func fn = { 0 };

		if (!i)
			snprintf(name, sizeof(name), "root");
		else if (i < 5)
			snprintf(name, sizeof(name), "mid_%d", i - 1);
		else
			snprintf(name, sizeof(name), "leaf_%d", i - 5);
		fn.name = name;
		f[i] = session__add_func(&s, &fn);
	}
	p[0] = session__path(&s, 0, f[0]);
	for (i = 1; i < 5; i++) {
		p[i] = session__path(&s, p[0], f[i]);
		for (j = 0; j < 4; j++)
			p[5 + (i - 1) * 4 + j] = session__path(&s, p[i], f[5 + (i - 1) * 4 + j]);
	}
	session__thread(&s, 1000, 1000);
	err = exporter__new(&archive_exporter, out, &s, &e);
	if (err)
		return 1;
	memset(&ev, 0, sizeof(ev));
	ev.kind = BP_EV_CALL;
	ev.call.pid = ev.call.tid = 1000;
	/* one root call holds 4 middles of 4 leaves: 21 calls per round */
	while (done < n) {
		uint64_t rb = t, mid_total = 0;

		for (i = 1; i < 5 && done < n; i++) {
			uint64_t mb = t, leaves = 0;

			for (j = 0; j < 4 && done < n; j++) {
				int k = 5 + (i - 1) * 4 + j;
				uint64_t d = draw((200 + 50 * k) * (k == 12 ? scale : 1));

				err = put_call(e, &s, &ev, f[k], p[k], 2, t, t + d, d);
				if (err)
					goto fail;
				t += d + 10;
				leaves += d + 10;
				done++;
			}
			if (done >= n)
				break;
			t += draw(100);
			err = put_call(e, &s, &ev, f[i], p[i], 1, mb, t, t - mb - leaves);
			if (err)
				goto fail;
			mid_total += t - mb;
			done++;
		}
		if (done >= n)
			break;
		t += draw(50);
		err = put_call(e, &s, &ev, f[0], p[0], 0, rb, t, t - rb - mid_total);
		if (err)
			goto fail;
		done++;
	}
	s.duration = t;
	s.ncalls = done;
	err = exporter__finish(e, &s);
	if (err)
		goto fail;
	exporter__free(e);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	stat(out, &st);
	fprintf(stderr, "diff_gen: calls=%llu bytes=%lld seconds=%.1f\n", (unsigned long long)done,
		(long long)st.st_size, ts.tv_sec + ts.tv_nsec / 1e9 - t0);
	session__free(&s);
	return 0;
fail:
	exporter__free(e);
	session__free(&s);
	fprintf(stderr, "diff_gen: cannot write %s: %s\n", out, strerror(-err));
	return 1;
}
