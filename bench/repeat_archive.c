// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * repeat_archive: a big recording made of a real small one, for `view` on
 * millions of calls without tracing them one by one (on a loaded machine a
 * probe can cost microseconds).
 *
 *   repeat_archive -o OUT [-n CALLS] IN
 *
 * Replays the archive IN again and again, each copy shifted in time past
 * the previous one (by IN's duration plus 1 us) and its call ids past the
 * previous copy's, into the archive OUT, until it holds at least CALLS
 * calls (default 10,000,000).  Every call, edge, sample, mark and loss of
 * the copy keeps its thread, nesting and durations: a recording of the same
 * program run back to back.  Streaming: memory is IN's tables.
 * Prints one line on stderr: copies, calls, bytes, seconds.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "archive/replay.h"
#include "base/log.h"
#include "exporters/exporter.h"
#include "model/session.h"

struct ctx {
	struct exporter *e;
	const struct bp_session *tables;	/* the first copy's: what OUT's events refer to */
	uint64_t shift, id_shift;		/* of this copy */
	uint64_t max_id, max_ts, calls;
};

static int count_event(void *p, const struct bp_session *s, const struct bp_event *ev)
{
	struct ctx *c = p;

	(void)s;
	if (ev->kind == BP_EV_CALL) {
		c->calls++;
		if (ev->call.id > c->max_id)
			c->max_id = ev->call.id;
		if (ev->call.end > c->max_ts)
			c->max_ts = ev->call.end;
	}
	return 0;
}

static int copy_event(void *p, const struct bp_session *s, const struct bp_event *in)
{
	struct ctx *c = p;
	struct bp_event ev = *in;
	uint64_t d = c->shift;

	(void)s;
	switch (ev.kind) {
	case BP_EV_CALL:
		ev.call.begin += d;
		ev.call.end += d;
		ev.call.id += c->id_shift;
		if (ev.call.parent_id)
			ev.call.parent_id += c->id_shift;
		break;
	case BP_EV_LOSS:
		ev.loss.ts += d;
		break;
	case BP_EV_SAMPLE:
		ev.sample.ts += d;
		break;
	case BP_EV_EDGE:
		ev.edge.src_ts += d;
		ev.edge.dst_ts += d;
		if (ev.edge.src_call)
			ev.edge.src_call += c->id_shift;
		if (ev.edge.dst_call)
			ev.edge.dst_call += c->id_shift;
		break;
	case BP_EV_ANNOT:
		ev.annot.ts += d;
		if (ev.annot.call)
			ev.annot.call += c->id_shift;
		break;
	default:
		break;
	}
	return exporter__event(c->e, c->tables, &ev);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *in;
	uint64_t want = 10000000, copies = 0, period;
	struct ctx c = { 0 };
	struct bp_session first, s;
	struct timespec t0, t1;
	struct stat st;
	int opt, err;

	while ((opt = getopt(argc, argv, "o:n:")) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'n':
			want = strtoull(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: repeat_archive -o OUT [-n CALLS] IN\n");
			return 2;
		}
	}
	if (!out || optind + 1 != argc) {
		fprintf(stderr, "usage: repeat_archive -o OUT [-n CALLS] IN\n");
		return 2;
	}
	in = argv[optind];
	clock_gettime(CLOCK_MONOTONIC, &t0);
	session__init(&first);
	err = replay__run(in, false, NULL, &first, NULL, count_event, &c, NULL);
	if (err)
		return 1;
	if (!c.calls) {
		p_err("%s has no calls to repeat", in);
		return 1;
	}
	period = (first.duration > c.max_ts ? first.duration : c.max_ts) + 1000;
	c.tables = &first;
	first.duration = 0;
	err = exporter__new(&archive_exporter, out, &first, &c.e);
	if (err)
		return 1;
	for (copies = 0; copies * c.calls < want; copies++) {
		c.shift = copies * period;
		c.id_shift = copies * (c.max_id + 1);
		session__init(&s);
		err = replay__run(in, false, NULL, &s, NULL, copy_event, &c, NULL);
		session__free(&s);
		if (err)
			break;
	}
	first.duration = copies * period;
	first.ncalls = copies * c.calls;
	if (!err)
		err = exporter__finish(c.e, &first);
	exporter__free(c.e);
	session__free(&first);
	if (err)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	stat(out, &st);
	fprintf(stderr, "repeat_archive: copies=%" PRIu64 " calls=%" PRIu64 " bytes=%lld seconds=%.2f\n",
		copies, copies * c.calls, (long long)st.st_size,
		(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
